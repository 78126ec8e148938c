import type { Converter } from './converter.ts';
import { decodeText } from './text-content.ts';

/** Markdown needs no conversion; it is decoded as UTF-8 with no newline translation, like the seed. */
export class MarkdownPassthrough implements Converter {
  readonly extensions = ['md', 'markdown'] as const;
  readonly offThread = true;

  async toMarkdown(bytes: Buffer): Promise<string> {
    return decodeText(bytes, 'Markdown');
  }
}
