/**
 * Issue 43 item 6: a streamed answer segmented its whole text at every token to find where the last sentence
 * starts, and re-checked every passage's and earlier sentence's stems at every settled sentence: work that grew
 * with the square of the answer (6,000 characters of one-character tokens: 7.4 s of event loop). It now looks for a
 * new sentence only once a sentence break can have arrived, and checks each sentence once.
 */
import { describe, expect, it, vi } from 'vitest';
import type { SearchHit } from '../../src/domain.ts';

const segmentations = vi.hoisted(() => ({ count: 0 }));
const stemmings = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../src/answer-check/sentence-support.ts', async (original) => {
  const module = await original<typeof import('../../src/answer-check/sentence-support.ts')>();
  return { ...module, contentStems: (...args: Parameters<typeof module.contentStems>) => (stemmings.count++, module.contentStems(...args)) };
});
vi.mock('../../src/answer-check/answer-sentences.ts', async (original) => {
  const module = await original<typeof import('../../src/answer-check/answer-sentences.ts')>();
  return { ...module, answerSentences: (...args: Parameters<typeof module.answerSentences>) => (segmentations.count++, module.answerSentences(...args)) };
});
const { VerifiedStream } = await import('../../src/answer-check/verified-stream.ts');

const passage: SearchHit = { id: 'handbook/backups.md#0', source: 'handbook/backups.md', headingPath: '', chunkIndex: 0, text: 'Snapshots are kept for thirty days in the backup bucket.', score: 1, fusionScore: 1 };

function streamed(text: string): string {
  const stream = new VerifiedStream([passage], 'mark', undefined, 'How long are snapshots kept?');
  let shown = '';
  for (const char of text) shown += stream.push(char);
  return shown;
}

describe('a streamed answer', () => {
  it('segments its text once per possible sentence break, not once per token', () => {
    const sentences = 40;
    segmentations.count = 0;
    const shown = streamed('Snapshots are kept for thirty days [P1]. '.repeat(sentences));
    expect(shown.startsWith('Snapshots are kept for thirty days [handbook/backups.md#0]. Snapshots')).toBe(true);
    // One look for the next sentence and one check of the text before it, per sentence; it was one per character.
    expect(segmentations.count).toBeLessThanOrEqual(3 * sentences);
  });

  it('stems the passages and the question once, and each sentence once', () => {
    const sentences = 40;
    stemmings.count = 0;
    streamed(Array.from({ length: sentences }, (_, n) => `Snapshots are kept for thirty days in bucket ${n} [P1]. `).join(''));
    expect(stemmings.count).toBeLessThanOrEqual(2 + sentences);
  });

  it('does not segment a sentence still being written at each of its tokens', () => {
    segmentations.count = 0;
    streamed('snapshots are kept for thirty days in the bucket '.repeat(100));
    expect(segmentations.count).toBe(0);
  });
});
