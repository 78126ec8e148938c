import type { ConversationTurn } from './conversation.ts';

/**
 * How many earlier questions an LLM-free follow-up carries. Measured on eval/golden/conversations.yaml
 * (30 follow-ups, BM25): 1 gives hit@5 0.900, MRR 0.591; 2 gives 0.933, 0.635, since a follow-up of a
 * follow-up finds its subject two questions back, while a change of topic loses nothing (its older
 * question ranks below); 3 adds nothing more.
 */
export const EXPANSION_USER_TURNS = 2;

/**
 * The longest text a search embeds, in characters: the API's bound on a question (/search, /chat), so an
 * embedder that takes any question takes an expanded follow-up too (a 512-token model refuses far longer).
 */
export const MAX_SEARCH_QUERY_CHARS = 2000;

/**
 * The LLM-free search query of a follow-up: the question, then the previous question(s) the user asked.
 * A follow-up such as "and how do I turn that off?" names no subject; the question before it does, and
 * its terms bring the passage that answers both into the BM25 and dense legs. Earlier answers are left
 * out: they are long, and their words would outweigh the follow-up's own. At most MAX_SEARCH_QUERY_CHARS:
 * the newest text is kept, and an older question is cut where the bound falls.
 */
export function expandFollowUp(question: string, earlier: readonly ConversationTurn[]): string {
  const asked = earlier.filter((turn) => turn.role === 'user').slice(-EXPANSION_USER_TURNS).map((turn) => turn.content);
  let query = '';
  for (const text of [question, ...asked.reverse()]) {
    const room = MAX_SEARCH_QUERY_CHARS - query.length - (query === '' ? 0 : 1);
    if (room <= 0) break;
    query += (query === '' ? '' : '\n') + codePointPrefix(text, room);
  }
  return query;
}

/** The first `length` UTF-16 units of `text`, never splitting a surrogate pair. */
function codePointPrefix(text: string, length: number): string {
  if (text.length <= length) return text;
  const cut = /[\uD800-\uDBFF]/.test(text[length - 1] ?? '') ? length - 1 : length;
  return text.slice(0, cut);
}
