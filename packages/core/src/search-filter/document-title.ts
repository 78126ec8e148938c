import { basename } from 'node:path';

/** How far into an HTML file its <title> is looked for: it belongs in <head>. */
const HTML_HEAD_BYTES = 64 * 1024;

/**
 * A document's title, stored with its metadata and shown on results: the HTML `<title>` of an HTML file, else the
 * first level-1 heading of its Markdown (a Markdown file's own; docling-serve writes a document's title as one),
 * else the file name. Whitespace is collapsed; at most 300 characters.
 */
export function documentTitle(uri: string, markdown: string, bytes?: Buffer): string {
  const title = (isHtml(uri) && bytes ? htmlTitle(bytes) : undefined) ?? firstH1(markdown) ?? basename(uri.replace(/[?#].*$/, ''));
  return title.slice(0, 300);
}

function isHtml(uri: string): boolean {
  return /\.html?$/i.test(uri.replace(/[?#].*$/, ''));
}

/** An ATX `# Title` line outside fenced code, its closing #s and inline emphasis marks dropped. */
function firstH1(markdown: string): string | undefined {
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s{0,3}(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const heading = /^\s{0,3}#[ \t]+(.+?)(?:[ \t]+#+)?\s*$/.exec(line);
    if (heading) return clean(heading[1]!.replace(/[*_`]/g, ''));
  }
  return undefined;
}

function htmlTitle(bytes: Buffer): string | undefined {
  const head = bytes.subarray(0, HTML_HEAD_BYTES).toString('utf8');
  const match = /<title[^>]*>([\s\S]*?)<\/title\s*>/i.exec(head);
  return match ? clean(decodeEntities(match[1]!)) : undefined;
}

/** The character references a title holds in practice: the five named ones and numeric ones. */
function decodeEntities(text: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (entity, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
    }
    return named[name.toLowerCase()] ?? entity;
  });
}

function clean(text: string): string | undefined {
  const collapsed = text.replace(/\s+/g, ' ').trim();
  return collapsed === '' ? undefined : collapsed;
}
