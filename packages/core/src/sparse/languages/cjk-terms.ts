/**
 * Terms of Chinese, Japanese and Korean text, which has no spaces between words: fastembed's tokenizer keeps a
 * whole CJK sentence as one token, so BM25 could only match it whole. Our own mode (BM25_LANGUAGE=cjk), outside
 * fastembed parity:
 *   - Han and kana runs are cut into words by `Intl.Segmenter` (ICU's dictionary for Chinese and Japanese, in
 *     every Node build with full ICU, the default); a runtime without it gets overlapping character bigrams;
 *   - Hangul runs (Korean words carry their particles) become overlapping syllable bigrams;
 *   - the text's other letters and digits take the English path (stopwords, Snowball English).
 * https://developer.mozilla.org/en-US/docs/Web/JavaScript/Reference/Global_Objects/Intl/Segmenter
 */

/** Runs of one script family inside a `\w` run: Han with kana (Japanese mixes them in one word), Hangul, or anything else. */
const SCRIPT_PIECE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u30FC\u30FB]+|\p{Script=Hangul}+|[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u30FC\u30FB\p{Script=Hangul}]+/gu;
const HAN_OR_KANA = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u30FC\u30FB]/u;
const HANGUL = /^\p{Script=Hangul}/u;
const SHORT_HIRAGANA = /^\p{Script=Hiragana}{1,2}$/u;

/** Chinese function words that carry no topic (BM25's IDF would weigh them down anyway; dropping keeps query vectors short). */
const CHINESE_FUNCTION_WORDS: ReadonlySet<string> = new Set('的 了 是 在 和 与 及 或 也 都 就 而 之 其 这 那 个 吗 呢 吧 啊 把 被 从 对 为 以 于 由 将 并 但 如 若'.split(' '));

const segmenter = new Intl.Segmenter('zh', { granularity: 'word' });

export type ScriptPiece = { kind: 'han-kana' | 'hangul' | 'other'; text: string };

export function scriptPieces(run: string): ScriptPiece[] {
  return (run.match(SCRIPT_PIECE) ?? []).map((text) => ({
    kind: HAN_OR_KANA.test(text) ? 'han-kana' : HANGUL.test(text) ? 'hangul' : 'other',
    text,
  }));
}

/** Overlapping pairs of code points ("数据库" → 数据, 据库); a single character stays itself. */
export function characterBigrams(text: string): string[] {
  const characters = [...text];
  if (characters.length < 2) return characters;
  return characters.slice(1).map((character, position) => characters[position]! + character);
}

function dictionaryWords(text: string): string[] {
  return [...segmenter.segment(text)].filter((segment) => segment.isWordLike).map((segment) => segment.segment);
}

/** Whether this runtime's ICU segments Han text by dictionary: "日本語" is one word then, three without it. */
export const HAS_CJ_DICTIONARY = dictionaryWords('日本語').length === 1;

function isFunctionWord(word: string): boolean {
  return CHINESE_FUNCTION_WORDS.has(word) || SHORT_HIRAGANA.test(word);
}

/** The terms of a Han/kana run: dictionary words without function words, or bigrams where there is no dictionary. */
export function hanKanaTerms(text: string, withDictionary: boolean = HAS_CJ_DICTIONARY): string[] {
  if (!withDictionary) return characterBigrams(text);
  return dictionaryWords(text).filter((word) => !isFunctionWord(word));
}
