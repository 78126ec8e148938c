import { DEFAULT_BM25_LANGUAGE, type Bm25Language, type SnowballLanguage } from './languages/bm25-languages.ts';
import { characterBigrams, hanKanaTerms, scriptPieces } from './languages/cjk-terms.ts';
import { snowballStemmer, type Stem } from './languages/snowball-stemmers.ts';
import { stopwordsOf } from './languages/stopwords.ts';

/** fastembed `Bm25(token_max_length=40)`: longer tokens are dropped, counted in code points before stemming. */
const TOKEN_MAX_LENGTH = 40;

/** Python's `\w` under Unicode 14: runs of it are what fastembed's remove-punctuation + split leaves. */
const WORD_RUN = /[\p{L}\p{N}_]+/gu;
const SINGLE_PUNCTUATION = /^\p{P}$/u;

type Analyzer = (text: string) => string[];

function codePointLength(token: string): number {
  // A UTF-16 length within the limit cannot hide more code points than that.
  return token.length <= TOKEN_MAX_LENGTH ? token.length : [...token].length;
}

function isDropped(token: string, stopwords: ReadonlySet<string>): boolean {
  return SINGLE_PUNCTUATION.test(token) || stopwords.has(token) || codePointLength(token) > TOKEN_MAX_LENGTH;
}

/**
 * fastembed's `Bm25._stem` for one language: filters in its order (single punctuation, stopword, length), then
 * the language's Snowball stemmer, empty stems dropped.
 * https://github.com/qdrant/fastembed/blob/main/fastembed/sparse/bm25.py
 */
function stemTokens(tokens: readonly string[], stopwords: ReadonlySet<string>, stem: Stem): string[] {
  const stems: string[] = [];
  for (const token of tokens) {
    if (isDropped(token, stopwords)) continue;
    const stemmed = stem(token);
    if (stemmed.length > 0) stems.push(stemmed);
  }
  return stems;
}

function snowballAnalyzer(language: SnowballLanguage): Analyzer {
  const stopwords = stopwordsOf(language);
  const stem = snowballStemmer(language);
  return (text) => stemTokens(text.toLowerCase().match(WORD_RUN) ?? [], stopwords, stem);
}

/** BM25_LANGUAGE=cjk (see languages/cjk-terms.ts): CJK pieces segmented, the rest of each run through the English path. */
function cjkAnalyzer(): Analyzer {
  const stopwords = stopwordsOf('english');
  const stem = snowballStemmer('english');
  return (text) => {
    const terms: string[] = [];
    for (const run of text.toLowerCase().match(WORD_RUN) ?? []) {
      for (const piece of scriptPieces(run)) {
        if (piece.kind === 'other') terms.push(...stemTokens([piece.text], stopwords, stem));
        else {
          const cjkTerms = piece.kind === 'hangul' ? characterBigrams(piece.text) : hanKanaTerms(piece.text);
          terms.push(...cjkTerms.filter((term) => codePointLength(term) <= TOKEN_MAX_LENGTH));
        }
      }
    }
    return terms;
  };
}

const analyzers = new Map<Bm25Language, Analyzer>();

function analyzerOf(language: Bm25Language): Analyzer {
  let analyzer = analyzers.get(language);
  if (!analyzer) {
    analyzer = language === 'cjk' ? cjkAnalyzer() : snowballAnalyzer(language);
    analyzers.set(language, analyzer);
  }
  return analyzer;
}

/**
 * The kept stems of `text`, in order, as fastembed's `Bm25(language=…)` makes them (tokens = runs of `\w` of the
 * lowercased text, no accent folding: fastembed folds none). `cjk` is our own mode, outside that parity.
 */
export function bm25Stems(text: string, language: Bm25Language = DEFAULT_BM25_LANGUAGE): string[] {
  return analyzerOf(language)(text);
}
