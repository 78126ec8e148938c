import type { CodeLines, ConvertedDocument, HeadingLine, SectionEnd } from '../converter.ts';

/**
 * Writes a converted document as Markdown lines, recording its structure as it goes (the chunker reads the
 * structure, never the syntax): blocks are separated by a blank line, lines of one block are consecutive.
 */
export class MarkdownWriter {
  private readonly lines: string[] = [];
  private readonly headings: HeadingLine[] = [];
  private readonly codeBlocks: CodeLines[] = [];
  private readonly sectionEnds: SectionEnd[] = [];
  private blockEnded = false;
  private textWritten = false;

  /** Whether a line other than a heading was written: a document of headings alone makes no chunk. */
  get hasText(): boolean {
    return this.textWritten;
  }

  /** A line of the current block; blank lines are left out. */
  line(text: string): void {
    const trimmed = text.trim();
    if (trimmed === '') return;
    this.startLine();
    this.lines.push(trimmed);
    this.textWritten = true;
  }

  /** The next line starts a new block. */
  endBlock(): void {
    if (this.lines.length > 0) this.blockEnded = true;
  }

  heading(level: number, text: string): void {
    this.endBlock();
    this.startLine();
    this.headings.push({ line: this.lines.length, level, text });
    this.lines.push(`${'#'.repeat(Math.min(level, 6))} ${text}`);
    this.endBlock();
  }

  /** Closes the sections of `level` and deeper: what follows belongs to the heading above them. */
  sectionEnd(level: number): void {
    this.endBlock();
    this.startLine();
    this.sectionEnds.push({ line: this.lines.length, level });
    this.lines.push('');
    this.blockEnded = false;
  }

  /** Code as a fenced block, its lines as they are; the fence is longer than any run of backticks in the code. */
  code(code: string, language = ''): void {
    const lines = code.split('\n');
    while (lines.length > 0 && lines.at(-1)!.trim() === '') lines.pop();
    if (lines.length === 0) return;
    const fence = '`'.repeat(Math.max(3, longestBacktickRun(code) + 1));
    this.endBlock();
    this.startLine();
    const openingLine = this.lines.length;
    this.lines.push(`${fence}${language}`, ...lines, fence);
    this.codeBlocks.push({ openingLine, closingLine: this.lines.length - 1 });
    this.textWritten = true;
    this.endBlock();
  }

  headingTexts(): string[] {
    return this.headings.map((heading) => heading.text);
  }

  toDocument(): ConvertedDocument {
    return { markdown: this.lines.join('\n'), structure: { headings: this.headings, codeBlocks: this.codeBlocks, sectionEnds: this.sectionEnds } };
  }

  private startLine(): void {
    if (!this.blockEnded) return;
    this.lines.push('');
    this.blockEnded = false;
  }
}

function longestBacktickRun(text: string): number {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return longest;
}
