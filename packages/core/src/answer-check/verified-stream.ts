import { passagesByLabel, rewritePromptLabels } from '../chat/citations.ts';
import type { SearchHit } from '../domain.ts';
import type { Bm25Language } from '../sparse/languages/bm25-languages.ts';
import { answerSentences } from './answer-sentences.ts';
import { checkGrounding } from './grounding.ts';
import { verifyAnswer, type UnsupportedClaims } from './verified-answer.ts';

/**
 * A streamed answer verified sentence by sentence: a sentence is sent once the next one has begun (so
 * the citations written after its full stop are its own), checked and cited as verifyAnswer does, its
 * labels written as `source#chunk_index`. Nothing is sent before the first sentence a passage supports,
 * so an answer without any ends as the not-covered answer, with nothing to take back.
 */
export class VerifiedStream {
  private readonly byLabel: ReadonlyMap<string, SearchHit>;
  private modelText = '';
  private settledEnd = 0;
  private sent = '';

  constructor(
    private readonly passages: readonly SearchHit[],
    private readonly unsupportedClaims: UnsupportedClaims,
    private readonly language: Bm25Language | undefined,
    private readonly question?: string | undefined,
  ) {
    this.byLabel = passagesByLabel(passages);
  }

  /** The model's text so far. */
  get text(): string {
    return this.modelText;
  }

  /** The verified text that can be sent now; may be empty. */
  push(token: string): string {
    this.modelText += token;
    const settledEnd = this.lastSentenceStart();
    if (settledEnd <= this.settledEnd) return '';
    this.settledEnd = settledEnd;
    const prefix = this.modelText.slice(0, settledEnd);
    const grounding = checkGrounding(prefix, this.passages, this.language, this.question);
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
    if (sentences.length < 2 || last!.text.startsWith('[')) return this.settledEnd;
    return last!.start;
  }

  private readonly isKnown = (label: string): boolean => this.byLabel.has(label);
}
