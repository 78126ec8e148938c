import { describe, expect, it } from 'vitest';
import { MAX_BRACKET_CONTENT, passagesByLabel, rewritePromptLabels } from '../../src/chat/citations.ts';
import { LabelRewriter } from '../../src/chat/label-rewriter.ts';
import type { SearchHit } from '../../src/domain.ts';

function hit(source: string, chunkIndex: number): SearchHit {
  return { id: `${source}#${chunkIndex}`, source, headingPath: 'H', chunkIndex, text: 'x', score: 0.5, fusionScore: 0.5 };
}

const passages = [hit('docs/backup.md', 0), hit('README.md', 2)];

function streamed(tokens: string[]): string[] {
  const rewriter = new LabelRewriter(passages);
  return [...tokens.map((token) => rewriter.push(token)), rewriter.flush()];
}

describe('rewriting a streamed answer', () => {
  it('rewrites a label cut between tokens, holding back only the open bracket', () => {
    const pieces = streamed(['Nightly ', '[', 'P', '1', ', P', '2]', ' and kept.']);
    expect(pieces).toEqual(['Nightly ', '', '', '', '', '[docs/backup.md#0, README.md#2]', ' and kept.', '']);
  });

  it('sends, in pieces, exactly what the whole answer rewrites to', () => {
    const answer = `See [P2]; [a link](x) [P9] [P1 text\nmore] [${'y'.repeat(MAX_BRACKET_CONTENT)} [P1] done [P`;
    const whole = rewritePromptLabels(answer, passagesByLabel(passages));
    for (const size of [1, 2, 3, 7, 50]) {
      const tokens = answer.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g'))!;
      expect(streamed(tokens).join('')).toBe(whole);
    }
    expect(whole).toContain('See [README.md#2]; [a link](x) [P9] [P1 text\nmore]');
    expect(whole.endsWith(' [docs/backup.md#0] done [P')).toBe(true);
  });

  it('holds a bracket of exactly the longest label content, MAX_BRACKET_CONTENT characters, until it closes', () => {
    const content = `P1${', P1'.repeat(74)}  `;
    expect(content).toHaveLength(MAX_BRACKET_CONTENT);
    const answer = `See [${content}] done`;
    const whole = rewritePromptLabels(answer, passagesByLabel(passages));
    expect(whole).toContain('docs/backup.md#0');
    const pieces = streamed(['See [', content, '] done']);
    expect(pieces.slice(0, 2)).toEqual(['See ', '']);
    expect(pieces.join('')).toBe(whole);
  });

  it('does not hold text after a bracket that cannot become a label', () => {
    expect(streamed(['a [b', '\nc'])).toEqual(['a ', '[b\nc', '']);
    expect(streamed(['a [', 'y'.repeat(MAX_BRACKET_CONTENT + 1)])).toEqual(['a ', `[${'y'.repeat(MAX_BRACKET_CONTENT + 1)}`, '']);
  });
});
