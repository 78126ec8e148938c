import { NodeHtmlMarkdown } from 'node-html-markdown';
import type { Converter } from './converter.ts';

/** GitHub-flavoured Markdown out: ATX headings, fenced code (language kept), pipe tables, `*` lists. */
const translator = new NodeHtmlMarkdown({ codeFence: '```', bulletMarker: '*', maxConsecutiveNewlines: 2 });

/** HTML as the chunker needs it: headings, lists, tables and code as Markdown, never raw tags (the seed indexed tags as text). */
export function htmlToMarkdown(html: string): string {
  return translator.translate(html);
}

export class HtmlConverter implements Converter {
  readonly extensions = ['html', 'htm'] as const;

  async toMarkdown(bytes: Buffer): Promise<string> {
    return htmlToMarkdown(bytes.toString('utf8'));
  }
}
