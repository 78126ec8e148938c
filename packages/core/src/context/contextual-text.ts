/**
 * The text a chunk is embedded and BM25-encoded from: its context (CONTEXT_MODE), a blank line, then the
 * chunk's own text. Stores keep the two apart, so /search and /chat show the chunk's own text only.
 * Anthropic's contextual retrieval: https://www.anthropic.com/news/contextual-retrieval
 */
export function contextualText(text: string, context: string | undefined): string {
  return context ? `${context}\n\n${text}` : text;
}
