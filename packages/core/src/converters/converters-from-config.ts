import type { Config } from '../config.ts';
import type { Converter } from './converter.ts';
import { ConverterRegistry } from './converter-registry.ts';
import { DoclingServeConverter } from './docling-serve.ts';
import { DocxConverter } from './docx.ts';
import { HtmlConverter, maxHtmlBytesForHeap } from './html.ts';
import type { LinkPagesPolicy } from './html/link-list-pages.ts';
import { MarkdownPassthrough } from './markdown.ts';
import { PdfConverter } from './pdf.ts';
import { PptxConverter } from './pptx.ts';

/** What the embedded converters are built with; a worker thread builds its own from the same. */
export interface EmbeddedConverterOptions {
  linkPages?: LinkPagesPolicy | undefined;
  /** HTML pages larger than this are refused before they are parsed (INGEST_MAX_HTML_BYTES). */
  maxHtmlBytes?: number | undefined;
}

function embeddedConverters(options: EmbeddedConverterOptions): Converter[] {
  return [new MarkdownPassthrough(), new HtmlConverter({ linkPages: options.linkPages, maxBytes: options.maxHtmlBytes }), new PdfConverter(), new DocxConverter(), new PptxConverter()];
}

export function createEmbeddedConverters(options: EmbeddedConverterOptions = {}): ConverterRegistry {
  return new ConverterRegistry(embeddedConverters(options));
}

/**
 * The embedded converter of each extension, its module loaded on first use: a worker thread that converts
 * HTML pages never loads pdf.js or mammoth. The same converters as createEmbeddedConverters.
 */
export function loadEmbeddedConverter(extension: string, options: EmbeddedConverterOptions): Promise<Converter> | undefined {
  switch (extension) {
    case 'md':
    case 'markdown':
      return import('./markdown.ts').then((module) => new module.MarkdownPassthrough());
    case 'html':
    case 'htm':
      return import('./html.ts').then((module) => new module.HtmlConverter({ linkPages: options.linkPages, maxBytes: options.maxHtmlBytes }));
    case 'pdf':
      return import('./pdf.ts').then((module) => new module.PdfConverter());
    case 'docx':
      return import('./docx.ts').then((module) => new module.DocxConverter());
    case 'pptx':
      return import('./pptx.ts').then((module) => new module.PptxConverter());
    default:
      return undefined;
  }
}

/** Markdown and HTML are read directly; PDF, DOCX and PPTX go to docling-serve when DOCLING_URL is set. */
export function createConverters(
  config: Pick<Config, 'DOCLING_URL' | 'DOCLING_API_KEY' | 'DOCLING_TIMEOUT_MS'> & Partial<Pick<Config, 'INGEST_LINK_PAGES' | 'INGEST_MAX_HTML_BYTES' | 'INGEST_CONVERT_MEMORY_MB'>>,
): ConverterRegistry {
  const converters = embeddedConverters(embeddedConverterOptions(config));
  // Registered last, so it wins for the extensions it shares with the embedded converters.
  if (config.DOCLING_URL) converters.push(new DoclingServeConverter({ url: config.DOCLING_URL, apiKey: config.DOCLING_API_KEY, timeoutMs: config.DOCLING_TIMEOUT_MS }));
  return new ConverterRegistry(converters);
}

/**
 * The embedded converters' settings: HTML pages are capped at INGEST_MAX_HTML_BYTES, by default at what a tree
 * can take of a worker's heap (INGEST_CONVERT_MEMORY_MB, see maxHtmlBytesForHeap).
 */
export function embeddedConverterOptions(config: Partial<Pick<Config, 'INGEST_LINK_PAGES' | 'INGEST_MAX_HTML_BYTES' | 'INGEST_CONVERT_MEMORY_MB'>>): EmbeddedConverterOptions {
  const heapMb = config.INGEST_CONVERT_MEMORY_MB;
  const maxHtmlBytes = config.INGEST_MAX_HTML_BYTES ?? (heapMb === undefined ? undefined : maxHtmlBytesForHeap(heapMb));
  return { linkPages: config.INGEST_LINK_PAGES, maxHtmlBytes };
}
