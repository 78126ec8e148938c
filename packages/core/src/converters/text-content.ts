import { unreadable } from './unreadable.ts';

/**
 * Share of a text document's characters that may be undecodable (U+FFFD) or control characters before
 * it is taken for binary content under a text name. Random bytes score above 0.5; a Latin-1 page read
 * as UTF-8 loses only its accented letters (a few percent of French prose, 20 % of a sentence packed with them).
 */
const MAX_SUSPICIOUS_SHARE = 0.3;
/**
 * Share of NUL bytes past which a text file is binary. Not any NUL at all, as git's heuristic has it: published
 * pages hold a few (Javadoc shows the NUL character of a constant as itself: 2 in 55 kB).
 */
const MAX_NUL_SHARE = 0.01;
const REPLACEMENT = 0xfffd;

/**
 * A Markdown or HTML file's bytes as UTF-8 text; binary content (a NUL byte, mostly undecodable bytes
 * or control characters) fails with RAG_DOCUMENT_UNREADABLE instead of being indexed as mojibake.
 */
export function decodeText(bytes: Buffer, format: string): string {
  if (isUtf16(bytes)) throw unreadable(`${format} file in UTF-16: save it as UTF-8`);
  if (nulBytes(bytes) > MAX_NUL_SHARE * bytes.length) throw unreadable(`binary content in a ${format} file (NUL bytes)`);
  const text = bytes.toString('utf8');
  const suspicious = suspiciousCharacters(text);
  if (text.length > 0 && suspicious / text.length > MAX_SUSPICIOUS_SHARE) {
    throw unreadable(`binary content in a ${format} file (${Math.round((suspicious / text.length) * 100)} % of its characters are not UTF-8 text)`);
  }
  return text;
}

function nulBytes(bytes: Buffer): number {
  let count = 0;
  for (let index = bytes.indexOf(0); index !== -1; index = bytes.indexOf(0, index + 1)) count += 1;
  return count;
}

/** A byte order mark of UTF-16 (https://www.unicode.org/faq/utf_bom.html#bom1). */
function isUtf16(bytes: Buffer): boolean {
  return bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff));
}

/** Undecodable bytes, and C0/C1 controls other than tab, line feed, form feed and carriage return. */
function suspiciousCharacters(text: string): number {
  let count = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code === REPLACEMENT || (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0c && code !== 0x0d) || (code >= 0x7f && code < 0xa0)) count += 1;
  }
  return count;
}
