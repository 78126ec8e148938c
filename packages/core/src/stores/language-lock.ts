import { RagError } from '../errors.ts';
import { DEFAULT_BM25_LANGUAGE, type Bm25Language } from '../sparse/languages/bm25-languages.ts';

/** What a collection records as its BM25 language: nothing (made before BM25_LANGUAGE) counts as english. */
export function recordedLanguage(recorded: unknown): string {
  return typeof recorded === 'string' ? recorded : DEFAULT_BM25_LANGUAGE;
}

/**
 * Throws RAG_LANGUAGE_MISMATCH when the collection was indexed in another BM25 language than the one
 * configured: its sparse vectors hold another language's stems, which this process's queries (or writes)
 * would never meet. Readers and writers alike.
 */
export function assertSameLanguage(collection: string, recorded: unknown, configured: Bm25Language): void {
  const language = recordedLanguage(recorded);
  if (language === configured) return;
  throw new RagError('RAG_LANGUAGE_MISMATCH', `(Collection "${collection}" was indexed with BM25_LANGUAGE=${language}; configured: ${configured}.)`);
}
