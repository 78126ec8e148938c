import { describe, expect, it } from 'vitest';
import { passageExcerpt } from '../../src/chat/passage-excerpt.ts';
import type { SearchHit } from '../../src/domain.ts';

const BODY = [
  'Backups run every night at 02:00 UTC. They are written to the eu-west bucket. Snapshots are kept for thirty days, then deleted. Restores need two approvals.',
  '',
  '```sh',
  'restore-snapshot --date 2026-01-01',
  '```',
  '',
  'The restore takes about forty minutes.',
].join('\n');
const hit: SearchHit = { id: 'b#0', source: 'backups.md', headingPath: 'Backups', chunkIndex: 0, text: `backups.md > Backups\n\n${BODY}`, score: 1, fusionScore: 1 };

describe('the passage excerpt the prompt carries', () => {
  it('keeps a passage that fits whole', () => {
    expect(passageExcerpt('how long are snapshots kept?', hit, 10_000)).toBe(hit);
  });

  it('keeps the heading line and the sentences around the one covering the question, marking what it leaves out', () => {
    const excerpt = passageExcerpt('how long are snapshots kept?', hit, 120);
    expect(excerpt.text).toBe('backups.md > Backups\n\n…\nThey are written to the eu-west bucket.\nSnapshots are kept for thirty days, then deleted.\nRestores need two approvals.\n…');
    expect(excerpt.text.length).toBeLessThan(hit.text.length);
    expect({ ...excerpt, text: hit.text }).toEqual(hit);
  });

  it('keeps a code block whole, as one unit', () => {
    const excerpt = passageExcerpt('which command restores a snapshot by date?', hit, 120);
    expect(excerpt.text).toContain('```sh\nrestore-snapshot --date 2026-01-01\n```');
  });

  it('cuts a single unit longer than the limit', () => {
    const long: SearchHit = { ...hit, text: `a.md > A\n\n${'word '.repeat(100)}` };
    expect(passageExcerpt('word', long, 50).text).toBe(`a.md > A\n\n${'word '.repeat(100).trim().slice(0, 50)}…`);
  });
});
