/**
 * What the server writes into an answer after a sentence that no passage given supports
 * (UNSUPPORTED_CLAIMS=mark, verified-answer.ts). Bracketed like a citation, where a citation would stand, but
 * never read as one: it holds no `#n` and no prompt label.
 */
export const UNSUPPORTED_MARK = '[not supported by the documents]';
