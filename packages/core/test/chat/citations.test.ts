import { describe, expect, it } from 'vitest';
import { citedLabels, passagesByLabel, resolveCitations, rewritePromptLabels } from '../../src/chat/citations.ts';
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

  it('reads a source whose name holds a comma or a semicolon whole', () => {
    const passages = [hit('a,b.md', 0, 'x'), hit('b.md', 0, 'y'), hit('notes; 2024.md', 3, 'z'), hit('x.md', 1, 'v'), hit('y.md', 2, 'w')];
    const cite = (answer: string) => {
      const { citations, unknownCitations } = resolveCitations(answer, passages);
      return { cited: citations.map((citation) => `${citation.source}#${citation.chunkIndex}`), unknownCitations };
    };
    expect(cite('A [a,b.md#0].')).toEqual({ cited: ['a,b.md#0'], unknownCitations: [] });
    expect(cite('A [notes; 2024.md#3, b.md#0].')).toEqual({ cited: ['notes; 2024.md#3', 'b.md#0'], unknownCitations: [] });
    expect(cite('A [x.md#1, y.md#2] [x.md#1;y.md#2].')).toEqual({ cited: ['x.md#1', 'y.md#2'], unknownCitations: [] });
    // Not given: read up to the first `#n` that a separator follows, never moved onto another document.
    expect(cite('A [c,d.md#0].')).toEqual({ cited: [], unknownCitations: ['c,d.md#0'] });
  });

  it('reads the label of a passage given whole even where it looks like two', () => {
    const passages = [hit('v1#2, notes.md', 0, 'x'), hit('notes.md', 0, 'y')];
    const { citations, unknownCitations } = resolveCitations('A [v1#2, notes.md#0].', passages);
    expect(citations.map((citation) => citation.source)).toEqual(['v1#2, notes.md']);
    expect(unknownCitations).toEqual([]);
  });

  it('resolves the prompt\'s labels to the passages in the order they were given, and reports those out of range', () => {
    const passages = [hit('docs/backup.md', 0, 'x', 0.9), hit('README.md', 2, 'y', 0.4), hit('a,b.md', 5, 'z', 0.3)];
    const { citations, unknownCitations } = resolveCitations('Nightly [P1]. Kept [P3, P1; P2] and [P9]; [README.md#2] again.', passages);
    expect(citations.map((citation) => `${citation.source}#${citation.chunkIndex}`)).toEqual(['docs/backup.md#0', 'a,b.md#5', 'README.md#2']);
    expect(unknownCitations).toEqual(['P9']);
  });

  it('writes the prompt\'s labels as source#chunk_index, leaving other brackets as written', () => {
    const byLabel = passagesByLabel([hit('docs/backup.md', 0, 'x'), hit('a]b, c.md', 2, 'y')]);
    expect(rewritePromptLabels('Nightly [P1]. Kept [P2; P1] [P9] [P1 and more] [a link](P1) [README.md#2] [1].', byLabel)).toBe(
      'Nightly [docs/backup.md#0]. Kept [a]b, c.md#2; docs/backup.md#0] [P9] [P1 and more] [a link](P1) [README.md#2] [1].',
    );
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
    expect(answer).toContain('> Everyone may work from home up to three days a week. [onboarding.md#1] Full remote contracts are possible after probation. [onboarding.md#1]');
  });

  it('quotes first, within a passage, the sentence holding the question\'s rarest terms', () => {
    const readme = hit('README.md', 7, 'README.md > Scale\n\nA re-run that finds nothing changed takes 1 to 2.5 s. Changing the embedding model needs a new collection.');
    const answer = extractiveAnswer('what happens when I change the embedding model?', [readme]);
    expect(answer).toContain('> Changing the embedding model needs a new collection. [README.md#7] A re-run that finds nothing changed takes 1 to 2.5 s. [README.md#7]');
  });

  it('cites every sentence it quotes, and quotes first the passage whose sentence holds the rarest of the question\'s terms', () => {
    const speed = hit('bench.md', 0, 'bench.md > Speed\n\nWhen the embedding model runs on two cores, ingest happens at 377 chunks a second. Whatever happens, the embedding model stays loaded.');
    const change = hit('models.md', 3, 'models.md > Models\n\nChanging the embedding model needs a new collection.');
    const answer = extractiveAnswer('what happens when I change the embedding model?', [speed, change]);
    expect(answer.indexOf('[models.md#3]')).toBeGreaterThan(-1);
    expect(answer.indexOf('[models.md#3]')).toBeLessThan(answer.indexOf('[bench.md#0]'));
    expect(answer).toContain('> When the embedding model runs on two cores, ingest happens at 377 chunks a second. [bench.md#0] Whatever happens, the embedding model stays loaded. [bench.md#0]');
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

  it("stems with the collection's language: a French plural covers its singular only in French", () => {
    const passage = 'Un cheval noir.';
    expect(queryCoverage('les chevaux', passage, 'french')).toBe(1);
    expect(queryCoverage('les chevaux', passage, 'english')).toBe(0);
  });

  it('quotes the matching sentence of a French passage, and splits CJK sentences on their full stops', () => {
    const french = hit('chevaux.md', 0, 'chevaux.md > Écurie\n\nLes écuries ferment à midi. Un cheval blanc dort au fond.');
    const answer = extractiveAnswer('Où sont les chevaux ?', [french], 'french');
    expect(answer).toContain('> Un cheval blanc dort au fond. [chevaux.md#0]');
    expect(answer).not.toContain('écuries');
    const chinese = hit('zh.md', 0, 'zh.md > 说明\n\n今天下雨。备份每天运行。');
    expect(extractiveAnswer('备份', [chinese], 'cjk')).toContain('> 备份每天运行。 [zh.md#0]');
  });

  it('quotes a sentence wrapped across lines (PDF text) whole, keeping list items and headings apart', () => {
    const wrapped = hit('manual.pdf', 0, 'manual.pdf > Bearings\n\nGrease every bearing monthly.\nPurge the old grease until clean grease\nappears at the relief port.\n- check the seals\n- check the port');
    const answer = extractiveAnswer('how do I purge old grease?', [wrapped]);
    expect(answer).toContain('Purge the old grease until clean grease appears at the relief port.');
    expect(extractiveAnswer('seals', [wrapped])).toContain('> - check the seals [manual.pdf#0]');
  });
});
