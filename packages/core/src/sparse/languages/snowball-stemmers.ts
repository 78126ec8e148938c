import { stemmer as greekStemmer } from '@orama/stemmers/greek';
import { stem as englishStem } from 'porter2';
import { newStemmer } from 'snowball-stemmers';
import type { SnowballLanguage } from './bm25-languages.ts';

export type Stem = (word: string) => string;

/**
 * The stemmer fastembed calls for `language` (`py_rust_stemmers.SnowballStemmer(language).stem_word`,
 * rust-stemmers 1.2.0, Snowball algorithms of ~2017). Checked word for word against it by
 * test/sparse/bm25-languages.test.ts (goldens made by scripts/bm25-language-goldens.py):
 *   - english: porter2 (the path the shared English goldens pin, unchanged);
 *   - greek: @orama/stemmers (snowball-stemmers has no Greek);
 *   - every other language: snowball-stemmers, a JS port of the same Snowball sources.
 * Snowball 3.x ports (snowballstemmer, PyStemmer) differ from rust-stemmers and must not be used.
 */
export function snowballStemmer(language: SnowballLanguage): Stem {
  if (language === 'english') return englishStem;
  if (language === 'greek') return greekStemmer;
  const stemmer = newStemmer(language);
  return (word) => stemmer.stem(word);
}
