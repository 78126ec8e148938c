/**
 * What only the ingest job needs: document sources and converters. Kept out of the main entry so that
 * the retrieval service never loads the GCS client, the PDF reader or the Office parsers.
 */
export type { Converter } from './converters/converter.ts';
export { ConverterRegistry, extensionOf } from './converters/converter-registry.ts';
export { MarkdownPassthrough } from './converters/markdown.ts';
export type { DocumentSource, SourceDocument } from './sources/document-source.ts';
export { LocalDirectorySource } from './sources/local-dir.ts';
export { ACCESS_FILE, AccessRules } from './access/access-rules.ts';
export { HtmlConverter, htmlToDocument, htmlToMarkdown, maxHtmlBytesForHeap } from './converters/html.ts';
export { PdfConverter } from './converters/pdf.ts';
export { DocxConverter } from './converters/docx.ts';
export { PptxConverter } from './converters/pptx.ts';
export { DoclingServeConverter, type DoclingServeOptions } from './converters/docling-serve.ts';
export { createConverters, createEmbeddedConverters, embeddedConverterOptions } from './converters/converters-from-config.ts';
export { type DocumentPreparation, InProcessPreparation } from './pipeline/document-preparation.ts';
export { defaultConvertWorkers, WorkerPreparation } from './pipeline/worker-preparation.ts';
export { assertMemoryFits, containerMemoryLimit, jobBoundMb, type MemoryPlan, workerBoundMb } from './pipeline/memory-budget.ts';
export { GcsSource, parseGcsUri, type GcsSourceOptions } from './sources/gcs.ts';
