/**
 * The `lead` context: what a reader learns from a document's opening, without a model. Its title (front
 * matter `title:`, else the first heading, else the file name) and its front-matter `description:` or,
 * without one, its first prose sentence. A change to this rule changes the contexts of every chunk:
 * bump LEAD_VERSION, which the collection records (a new collection is then needed, as for a model).
 */
export const LEAD_VERSION = 'lead-1';

const MAX_SENTENCE_CHARS = 300;

export function documentLead(markdown: string, source: string): string {
  const { fields, body } = splitFrontMatter(markdown);
  const title = fields.get('title') ?? firstHeading(body) ?? fileTitle(source);
  const sentence = fields.get('description') ?? firstProseSentence(body);
  return sentence ? `${title}: ${sentence}` : title;
}

/** `---` YAML front matter, read for its flat `key: value` lines only. */
function splitFrontMatter(markdown: string): { fields: Map<string, string>; body: string } {
  const fields = new Map<string, string>();
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n/.exec(markdown);
  if (!match) return { fields, body: markdown };
  for (const line of match[1]!.split(/\r?\n/)) {
    const field = /^([A-Za-z_-]+):\s*(.+)$/.exec(line);
    if (field) fields.set(field[1]!.toLowerCase(), field[2]!.trim().replace(/^(["'])(.*)\1$/, '$2'));
  }
  return { fields, body: markdown.slice(match[0].length) };
}

function firstHeading(body: string): string | undefined {
  const lines = proseLines(body, true);
  const h1 = lines.find((line) => /^#\s/.test(line)) ?? lines.find((line) => /^#{1,6}\s/.test(line));
  return h1 ? plainText(h1.replace(/^#{1,6}\s+/, '').replace(/\s#+\s*$/, '')) : undefined;
}

function fileTitle(source: string): string {
  const name = source.split(/[\\/]/).pop() ?? source;
  return name.replace(/\.[A-Za-z0-9]+$/, '');
}

/** The first paragraph of prose (not a heading, list, table, quote, code block or HTML), up to its first sentence end. */
function firstProseSentence(body: string): string | undefined {
  const paragraph: string[] = [];
  for (const line of proseLines(body, false)) {
    if (line.trim() === '') {
      if (paragraph.length > 0) break;
      continue;
    }
    if (/^\s*(#|[-*+]\s|\d+[.)]\s|\||>|<|!\[|\[!|```|~~~)/.test(line) || /^\s*[-=*_]{3,}\s*$/.test(line)) {
      if (paragraph.length > 0) break;
      continue;
    }
    paragraph.push(line.trim());
  }
  if (paragraph.length === 0) return undefined;
  const text = plainText(paragraph.join(' '));
  const end = /[.!?](?=\s|$)/.exec(text);
  const sentence = end ? text.slice(0, end.index + 1) : text;
  return sentence.length <= MAX_SENTENCE_CHARS ? sentence : `${sentence.slice(0, MAX_SENTENCE_CHARS).replace(/\s+\S*$/, '')}…`;
}

/** The body's lines outside fenced code blocks (kept as blank lines, so they end a paragraph). */
function proseLines(body: string, headingsOnly: boolean): string[] {
  const lines: string[] = [];
  let fenced = false;
  for (const line of body.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      lines.push('');
      continue;
    }
    lines.push(fenced ? '' : line);
  }
  return headingsOnly ? lines.filter((line) => line !== '') : lines;
}

/** Links and images to their text, inline code and emphasis marks dropped, spaces collapsed. */
function plainText(markdown: string): string {
  return markdown
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/(\*\*|__|\*|_)(\S[^*_]*?)\1/g, '$2')
    .replace(/\s+/g, ' ')
    .trim();
}
