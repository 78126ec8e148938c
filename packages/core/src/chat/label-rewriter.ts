import type { SearchHit } from '../domain.ts';
import { MAX_BRACKET_CONTENT, passagesByLabel, rewritePromptLabels } from './citations.ts';

/**
 * Rewrites a streamed answer's prompt labels (`[P2]`) as `[source#chunk_index]` token by token. A
 * bracket still open at the end of the text received may be a label cut between tokens, so it is held
 * back until it closes, breaks a line or grows past any label's length; everything before it is sent
 * at once. The pieces sent add up to `rewritePromptLabels` of the whole answer.
 */
export class LabelRewriter {
  private readonly byLabel: ReadonlyMap<string, SearchHit>;
  private held = '';

  constructor(passages: readonly SearchHit[]) {
    this.byLabel = passagesByLabel(passages);
  }

  /** The text that can be sent now, rewritten; may be empty. */
  push(text: string): string {
    const pending = this.held + text;
    const cut = openBracketStart(pending);
    this.held = pending.slice(cut);
    return rewritePromptLabels(pending.slice(0, cut), this.byLabel);
  }

  /** What is still held, at the end of the answer. */
  flush(): string {
    const rest = rewritePromptLabels(this.held, this.byLabel);
    this.held = '';
    return rest;
  }
}

/** Where a bracket that could still become a label starts, or the text's length when there is none. */
function openBracketStart(text: string): number {
  const start = text.lastIndexOf('[');
  if (start === -1) return text.length;
  const content = text.slice(start + 1);
  const couldClose = !content.includes(']') && !content.includes('\n') && content.length <= MAX_BRACKET_CONTENT;
  return couldClose ? start : text.length;
}
