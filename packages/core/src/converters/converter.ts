/** Turns a document's bytes into Markdown, keeping headings where the format has them. */
export interface Converter {
  /** Lower-case extensions without the dot, e.g. ['pdf', 'docx']. */
  readonly extensions: readonly string[];
  toMarkdown(bytes: Buffer, fileName: string, signal?: AbortSignal): Promise<string>;
}
