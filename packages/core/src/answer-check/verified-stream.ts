import { passagesByLabel, rewritePromptLabels } from '../chat/citations.ts';
import type { SearchHit } from '../domain.ts';
import type { Bm25Language } from '../sparse/languages/bm25-languages.ts';
import { answerSentences } from './answer-sentences.ts';
import { GroundingChecker } from './grounding.ts';
import { verifyAnswer, type UnsupportedClaims } from './verified-answer.ts';

/** What a sentence break follows (UAX #29: a sentence terminator, or a paragraph separator). */
const MAY_END_SENTENCE = /[\p{Sentence_Terminal}\n\r\u0085\u2028\u2029]/u;
/** What may stand between a terminator and the break (UAX #29's Close: brackets and quotes, a citation's `]` too). */
const MAY_CLOSE_SENTENCE = /[\p{Sentence_Terminal}\p{Ps}\p{Pe}\p{Pi}\p{Pf}"']/u;

/**
 * A streamed answer verified sentence by sentence: a sentence is sent once the next one has begun (so
 * the citations written after its full stop are its own), checked and cited as verifyAnswer does, its
 * labels written as `source#chunk_index`. Nothing is sent before the first sentence a passage supports,
 * so an answer without any ends as the not-covered answer, with nothing to take back.
 */
export class VerifiedStream {
  private readonly byLabel: ReadonlyMap<string, SearchHit>;
  private readonly grounding: GroundingChecker;
  private modelText = '';
  private settledEnd = 0;
  private sent = '';
  /**
   * A sentence can have begun since the last look: a terminator or a line break arrived since (Unicode's sentence
   * breaks follow one, UAX #29), the text ended in one or in what may follow one (a quote, a citation), or a
   * citation was still arriving. Otherwise the last sentence's start is the same.
   */
  private boundaryPending = false;

  constructor(
    passages: readonly SearchHit[],
    private readonly unsupportedClaims: UnsupportedClaims,
    language: Bm25Language | undefined,
    question?: string | undefined,
  ) {
    this.byLabel = passagesByLabel(passages);
    this.grounding = new GroundingChecker(passages, language, question);
  }

  /** The model's text so far. */
  get text(): string {
    return this.modelText;
  }

  /** The verified text that can be sent now; may be empty. */
  push(token: string): string {
    this.modelText += token;
    if (MAY_END_SENTENCE.test(token)) this.boundaryPending = true;
    // Segmenting the whole text at every token was work that grew with the square of the answer.
    if (!this.boundaryPending || !/\S/.test(token)) return '';
    const settledEnd = this.lastSentenceStart();
    if (settledEnd <= this.settledEnd) return '';
    this.settledEnd = settledEnd;
    const prefix = this.modelText.slice(0, settledEnd);
    const grounding = this.grounding.check(prefix);
    const { supported, attributed, miscited } = grounding.counts;
    if (supported + attributed + miscited === 0) return '';
    // The space after the sentence goes with the next one: a sentence left out after it would take it away.
    return this.sendUpTo(rewritePromptLabels(verifyAnswer(prefix, grounding, this.unsupportedClaims, this.isKnown).text, this.byLabel).trimEnd());
  }

  /** The rest of `shown` (the whole verified answer), when what was sent so far begins it. */
  finish(shown: string): string {
    return this.sendUpTo(shown);
  }

  private sendUpTo(shown: string): string {
    if (!shown.startsWith(this.sent)) return '';
    const delta = shown.slice(this.sent.length);
    this.sent = shown;
    return delta;
  }

  /** Where the sentence still being written starts; 0 while it may still be the first. */
  private lastSentenceStart(): number {
    const sentences = answerSentences(this.modelText, this.isKnown);
    const last = sentences.at(-1);
    // A last piece opening with a bracket may be the previous sentence's citation, still arriving.
    const citationArriving = last?.text.startsWith('[') ?? false;
    this.boundaryPending = citationArriving || MAY_CLOSE_SENTENCE.test(this.modelText.trimEnd().at(-1) ?? '');
    if (sentences.length < 2 || citationArriving) return this.settledEnd;
    return last!.start;
  }

  private readonly isKnown = (label: string): boolean => this.byLabel.has(label);
}
