import { basename } from 'node:path';
import { readBoundedText } from '../http/bounded-body.ts';
import {
  classifyFailure,
  deadlineFor,
  endpoint,
  HttpStatusError,
  InvalidResponseError,
  isRetryableFailure,
  MAX_ERROR_BODY_BYTES,
  maxBodyBytesOf,
  parseRetryAfter,
  retryAfterMs,
  withRetries,
  type RemoteCallOptions,
} from '../http/remote-call.ts';
import type { Converter, ConvertedDocument } from './converter.ts';
import { extensionOf } from './converter-registry.ts';
import { cleanConvertedMarkdown } from './clean-markdown.ts';
import { PAGE_BREAK_PLACEHOLDER, placePages, withoutPageBreaks } from './docling-pages.ts';
import { unreadable } from './unreadable.ts';
import { httpDispatcher } from '../http/http-dispatcher.ts';

export interface DoclingServeOptions {
  /** Base URL of docling-serve, e.g. http://docling:5001. */
  url: string;
  apiKey?: string | undefined;
  /** Deadline of one conversion, retries included; large PDFs take minutes on CPU. */
  timeoutMs?: number;
  retries?: number;
  minBackoffMs?: number;
  /** Most bytes read from an answer (default MAX_BODY_BYTES.converter: 64 MB of JSON-wrapped Markdown). */
  maxBodyBytes?: number;
}

/** The synchronous answer of POST /v1/convert/file for one file (docling-serve v1 API). */
interface ConvertResponse {
  document?: { md_content?: string | null; json_content?: unknown };
  status?: 'success' | 'partial_success' | 'skipped' | 'failure' | 'pending' | 'started';
  errors?: unknown[];
}

const DEFAULT_TIMEOUT_MS = 600_000;
const USABLE_STATUSES = new Set(['success', 'partial_success']);
/** docling-serve refuses a document it cannot read with these; the next document may go through. */
const DOCUMENT_STATUSES = new Set([400, 415, 422]);

/**
 * PDF, DOCX and PPTX through docling-serve: layout analysis, OCR of scans, tables and headings
 * recovered, Markdown out. https://github.com/docling-project/docling-serve/blob/main/docs/usage.md
 */
export class DoclingServeConverter implements Converter {
  readonly extensions = ['pdf', 'docx', 'pptx'] as const;
  /** docling gives PDF items their page and PPTX items their slide (`prov[].page_no`); DOCX items have none. */
  readonly pagedExtensions = ['pdf', 'pptx'] as const;

  constructor(private readonly options: DoclingServeOptions) {}

  async toMarkdown(bytes: Buffer, fileName: string, signal?: AbortSignal): Promise<string> {
    return (await this.toPagedMarkdown(bytes, fileName, signal)).markdown;
  }

  async toPagedMarkdown(bytes: Buffer, fileName: string, signal?: AbortSignal): Promise<ConvertedDocument> {
    const answer = await this.convert(bytes, basename(fileName), signal);
    if (!answer.status || !USABLE_STATUSES.has(answer.status)) {
      throw unreadable(`docling-serve: ${answer.status ?? 'no status'}${describeErrors(answer.errors)}`);
    }
    const markdown = answer.document?.md_content;
    if (typeof markdown !== 'string') throw unreadable('docling-serve answered without md_content');
    // The entities go first: the placeholder holds none. Pages are placed in docling's own Markdown, then its text
    // is made clean chunk text (clean-markdown.ts), which moves them line for line.
    const unescaped = unescapeHtmlOutsideCode(markdown);
    if (!(this.pagedExtensions as readonly string[]).includes(extensionOf(fileName))) return cleanConvertedMarkdown({ markdown: withoutPageBreaks(unescaped) });
    return cleanConvertedMarkdown(placePages(unescaped, answer.document?.json_content));
  }

  private async convert(bytes: Buffer, fileName: string, signal: AbortSignal | undefined): Promise<ConvertResponse> {
    const call: RemoteCallOptions = {
      dependency: 'converter',
      url: endpoint(this.options.url, '/v1/convert/file'),
      headers: this.options.apiKey ? { 'x-api-key': this.options.apiKey } : {},
      timeoutMs: this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxBodyBytes: this.options.maxBodyBytes,
      signal,
      classifyStatus: (failure) => (DOCUMENT_STATUSES.has(failure.status) ? unreadable(`docling-serve refused it: ${failure.message}`) : undefined),
    };
    const deadline = deadlineFor(call);
    try {
      const response = await withRetries(() => postFile(call, bytes, fileName, deadline), {
        retries: this.options.retries ?? 2,
        signal: deadline,
        minBackoffMs: this.options.minBackoffMs,
        isRetryable: (error) => !deadline.aborted && isRetryableFailure(error),
        retryAfterMs,
      });
      return await readAnswer(response, maxBodyBytesOf(call));
    } catch (error) {
      throw classifyFailure(call, error);
    }
  }
}

async function postFile(call: RemoteCallOptions, bytes: Buffer, fileName: string, signal: AbortSignal): Promise<Response> {
  const form = new FormData();
  form.append('files', new Blob([bytes]), fileName);
  form.append('to_formats', 'md');
  // The document's JSON too, for the page of each item (docling_core's DoclingDocument, `prov[].page_no`).
  form.append('to_formats', 'json');
  form.append('md_page_break_placeholder', PAGE_BREAK_PLACEHOLDER);
  // Pictures as a placeholder: embedded ones would put base64 into every chunk.
  form.append('image_export_mode', 'placeholder');
  const response = await fetch(call.url, { method: 'POST', headers: { accept: 'application/json', ...call.headers }, body: form, signal, dispatcher: httpDispatcher });
  if (response.ok) return response;
  const text = await readBoundedText(response, MAX_ERROR_BODY_BYTES, 'truncate').catch(() => '');
  throw new HttpStatusError(response.status, text.slice(0, 200), parseRetryAfter(response.headers.get('retry-after')));
}

async function readAnswer(response: Response, maxBytes: number): Promise<ConvertResponse> {
  const text = await readBoundedText(response, maxBytes);
  try {
    return JSON.parse(text) as ConvertResponse;
  } catch (error) {
    throw new InvalidResponseError(`invalid JSON (${text.length} bytes)`, { cause: error });
  }
}

const ESCAPED_CHARACTER: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>' };
const CODE_FENCE = /^\s*(```|~~~)/;
/** Splits a line around its code spans: odd parts are the spans. */
const CODE_SPAN = /(`[^`]*`)/;

/**
 * docling's Markdown serializer HTML-escapes text, `html.escape(text, quote=False)`, except code and formulas
 * (docling_core/transforms/serializer/markdown.py, MarkdownTextSerializer.post_process): a slide titled
 * "Risks & mitigations" comes back as "Risks &amp; mitigations". Chunks are plain text, cited as they are,
 * and the embedded converters do not escape: one pass turns the three entities back, outside code, so both
 * modes give the same heading paths and text ("&amp;lt;" becomes "&lt;", as written in the document).
 */
function unescapeHtmlOutsideCode(markdown: string): string {
  let inFence = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (CODE_FENCE.test(line)) {
        inFence = !inFence;
        return line;
      }
      if (inFence) return line;
      return line
        .split(CODE_SPAN)
        .map((part, index) => (index % 2 === 1 ? part : part.replace(/&(?:amp|lt|gt);/g, (entity) => ESCAPED_CHARACTER[entity]!)))
        .join('');
    })
    .join('\n');
}

/** docling's ErrorItem is `{component_type, module_name, error_message}`; older servers send strings. */
function describeErrors(errors: unknown[] | undefined): string {
  const messages = (errors ?? []).map((error) =>
    typeof error === 'object' && error !== null && 'error_message' in error ? String(error.error_message) : String(error),
  );
  return messages.length > 0 ? `: ${messages.join('; ')}` : '';
}
