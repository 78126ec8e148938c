import { ENGLISH_STOPWORDS } from '../english-stopwords.ts';
import type { SnowballLanguage } from './bm25-languages.ts';
import { NLTK_STOPWORDS } from './nltk-stopwords.ts';

const NONE: ReadonlySet<string> = new Set();

/** The stopwords fastembed's `Bm25` drops for `language` (see nltk-stopwords.ts for their provenance and gaps). */
export function stopwordsOf(language: SnowballLanguage): ReadonlySet<string> {
  if (language === 'english') return ENGLISH_STOPWORDS;
  const list = NLTK_STOPWORDS[language];
  return list ? new Set(list) : NONE;
}
