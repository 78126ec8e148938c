import { NOT_COVERED_ANSWER } from '../chat/extractive.ts';

/** The service's own refusal, or a model saying the documents do not cover it (English or French). */
const DECLINES = [
  /do(?:es)? not (?:cover|contain|mention|say|provide|include)/i,
  /don'?t (?:cover|contain|mention|say|provide|include)/i,
  /not covered/i,
  /no information (?:about|on)/i,
  /(?:ne|n')\s*(?:couvrent|couvre|traitent|traite|mentionnent|mentionne|abordent|aborde|contiennent|contient)\s+pas/i,
  /je ne sais pas/i,
  /\bi (?:do not|don'?t) know\b/i,
];

/** Whether a whole answer, or one of its sentences, says that the documents do not answer the question. */
export function isDeclined(text: string): boolean {
  return text.trim() === NOT_COVERED_ANSWER || DECLINES.some((pattern) => pattern.test(text));
}
