import { describe, expect, it } from 'vitest';
import { citedLabels, resolveCitations } from '../../src/chat/citations.ts';
import { extractiveAnswer, passageBody } from '../../src/chat/extractive.ts';
import { queryCoverage } from '../../src/chat/query-coverage.ts';
import type { SearchHit } from '../../src/domain.ts';

function hit(source: string, chunkIndex: number, text: string, score = 0.5): SearchHit {
  return { id: `${source}#${chunkIndex}`, source, headingPath: 'H', chunkIndex, text, score, fusionScore: score };
}

describe('citations', () => {
  it('finds [source#n] labels, including several in one bracket, once each', () => {
    const answer = 'Nightly [docs/backup.md#0]. Kept 35 days [docs/backup.md#0, README.md#2]; see also [a b.md#10].';
    expect(citedLabels(answer)).toEqual(['docs/backup.md#0', 'README.md#2', 'a b.md#10']);
  });

  it('ignores brackets that are not passage labels', () => {
    expect(citedLabels('a [link](x) and [1] and [source] text')).toEqual([]);
  });

  it('splits citations into given passages and unknown labels', () => {
    const passages = [hit('docs/backup.md', 0, 'x', 0.9), hit('README.md', 2, 'y', 0.4)];
    const { citations, unknownCitations } = resolveCitations('A [docs/backup.md#0] B [docs/invented.md#7] C [README.md#2]', passages);
    expect(citations).toEqual([
      { source: 'docs/backup.md', headingPath: 'H', chunkIndex: 0, score: 0.9 },
      { source: 'README.md', headingPath: 'H', chunkIndex: 2, score: 0.4 },
    ]);
    expect(unknownCitations).toEqual(['docs/invented.md#7']);
  });
});

describe('extractive answers', () => {
  const remote = hit(
    'onboarding.md',
    1,
    'onboarding.md > Onboarding > Remote work\n\nEveryone may work from home up to three days a week. Full remote contracts are possible after probation.',
  );

  it('strips the source and heading prefix from the quoted text', () => {
    expect(passageBody(remote.text)).toBe('Everyone may work from home up to three days a week. Full remote contracts are possible after probation.');
  });

  it('quotes the sentence that matches the question and labels it', () => {
    const answer = extractiveAnswer('how many days can I work from home?', [remote]);
    expect(answer).toContain('> Everyone may work from home up to three days a week. [onboarding.md#1]');
    expect(answer).not.toContain('probation');
  });

  it('leaves out a passage that matched only through its headings or code, quoting the next one', () => {
    const headingOnly = hit('README.md', 1, 'README.md > Remote work\n\nRun the installer first.\n\n```sh\ncurl remote work from home\n```');
    const answer = extractiveAnswer('how many days can I work from home?', [headingOnly, remote]);
    expect(answer).not.toContain('[README.md#1]');
    expect(answer).toContain('three days a week. [onboarding.md#1]');
  });

  it('falls back to the best passage opening when no sentence matches', () => {
    const answer = extractiveAnswer('zzz', [remote]);
    expect(answer).toContain('> Everyone may work from home up to three days a week. Full remote contracts are possible after probation. [onboarding.md#1]');
  });

  it('does not quote fenced code', () => {
    const withCode = hit('backups.md', 0, 'backups.md > Backups\n\nRestore a snapshot with the CLI.\n\n```sh\nstratactl restore --snapshot 42\n```\nRestores need two approvals.');
    const answer = extractiveAnswer('how do I restore a snapshot?', [withCode]);
    expect(answer).toContain('Restore a snapshot with the CLI.');
    expect(answer).not.toContain('stratactl');
  });

  it('measures how much of the question a passage covers', () => {
    expect(queryCoverage('work from home', remote.text)).toBe(1);
    expect(queryCoverage('capital of France', remote.text)).toBe(0);
    expect(queryCoverage('home of France', remote.text)).toBe(0.5);
    expect(queryCoverage('the of and', remote.text)).toBe(0);
  });
});
