import { NodeHtmlMarkdown } from 'node-html-markdown';
import type { Converter } from './converter.ts';
import { assertHtmlWithinLimits } from './html-limits.ts';
import { decodeText } from './text-content.ts';

/** GitHub-flavoured Markdown out: ATX headings, fenced code (language kept), pipe tables, `*` lists. */
const translator = new NodeHtmlMarkdown({ codeFence: '```', bulletMarker: '*', maxConsecutiveNewlines: 2 });

/**
 * HTML as the chunker needs it: headings, lists, tables and code as Markdown, never raw tags (the seed
 * indexed tags as text). HTML nested too deep is refused unparsed (RAG_DOCUMENT_TOO_COMPLEX, see html-limits.ts).
 */
export function htmlToMarkdown(html: string): string {
  assertHtmlWithinLimits(html);
  return translator.translate(html);
}

export class HtmlConverter implements Converter {
  readonly extensions = ['html', 'htm'] as const;

  async toMarkdown(bytes: Buffer): Promise<string> {
    return htmlToMarkdown(decodeText(bytes, 'HTML'));
  }
}
