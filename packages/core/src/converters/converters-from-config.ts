import type { Config } from '../config.ts';
import type { Converter } from './converter.ts';
import { ConverterRegistry } from './converter-registry.ts';
import { DoclingServeConverter } from './docling-serve.ts';
import { DocxConverter } from './docx.ts';
import { HtmlConverter } from './html.ts';
import { MarkdownPassthrough } from './markdown.ts';
import { PdfConverter } from './pdf.ts';
import { PptxConverter } from './pptx.ts';

/** Markdown and HTML are read directly; PDF, DOCX and PPTX go to docling-serve when DOCLING_URL is set. */
export function createConverters(config: Pick<Config, 'DOCLING_URL' | 'DOCLING_API_KEY' | 'DOCLING_TIMEOUT_MS'>): ConverterRegistry {
  const converters: Converter[] = [new MarkdownPassthrough(), new HtmlConverter(), new PdfConverter(), new DocxConverter(), new PptxConverter()];
  // Registered last, so it wins for the extensions it shares with the embedded converters.
  if (config.DOCLING_URL) converters.push(new DoclingServeConverter({ url: config.DOCLING_URL, apiKey: config.DOCLING_API_KEY, timeoutMs: config.DOCLING_TIMEOUT_MS }));
  return new ConverterRegistry(converters);
}
