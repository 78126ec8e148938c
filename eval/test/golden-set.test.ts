import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GoldenSetError, loadGoldenSet, parseGoldenSet } from '../src/golden-set.ts';

const root = '/repo';

function problemsOf(text: string): string {
  try {
    parseGoldenSet(text, 'set.yaml', root);
  } catch (error) {
    expect(error).toBeInstanceOf(GoldenSetError);
    return (error as Error).message;
  }
  throw new Error('expected the golden set to be refused');
}

describe('golden set validation', () => {
  it('reads the seed format, out-of-scope as none, and a corpus folder', () => {
    const set = parseGoldenSet(
      ['corpus: eval/corpora/x', 'questions:', '  - {question: a?, expected_source: docs/a.md, expected_substring: Alpha}', '  - {question: b?, expected_source: none}'].join('\n'),
      'sets/mine.yaml',
      root,
    );
    expect(set.name).toBe('mine');
    expect(set.corpus).toEqual({ root: '/repo/eval/corpora/x', include: undefined });
    expect(set.questions).toEqual([
      { number: 1, question: 'a?', expectedSource: 'docs/a.md', expectedSubstring: 'Alpha', kind: undefined },
      { number: 2, question: 'b?', expectedSource: undefined, expectedSubstring: undefined, kind: undefined },
    ]);
  });

  it('reads a corpus with include', () => {
    const set = parseGoldenSet('corpus: {path: ., include: [README.md, docs]}\nquestions: [{question: q, expected_source: README.md}]', 's.yaml', root);
    expect(set.corpus).toEqual({ root: '/repo', include: ['README.md', 'docs'] });
  });

  it('reads the BM25 language its documents are written in, and refuses one BM25_LANGUAGE does not know', () => {
    const question = 'questions: [{question: q, expected_source: a.md}]';
    expect(parseGoldenSet(`bm25_language: french\n${question}`, 's.yaml', root).bm25Language).toBe('french');
    expect(parseGoldenSet(question, 's.yaml', root).bm25Language).toBeUndefined();
    expect(problemsOf(`bm25_language: klingon\n${question}`)).toContain('bm25_language');
  });

  it('names the question number (from 1) and the field of each problem', () => {
    const message = problemsOf(
      ['questions:', '  - {question: fine, expected_source: a.md}', '  - {question: "", expected_source: a.md}', '  - {question: no source}'].join('\n'),
    );
    expect(message).toContain('set.yaml');
    expect(message).toContain('question 2 (question): must be a non-empty string');
    expect(message).toContain('question 3 (expected_source): Required');
  });

  it('refuses unknown fields (a typo would silently drop a check)', () => {
    expect(problemsOf('questions:\n  - {question: q, expected_source: a.md, expected_substr: x}')).toContain('question 1: Unrecognized key(s) in object: \'expected_substr\'');
  });

  it('refuses a substring on an out-of-scope question', () => {
    expect(problemsOf('questions:\n  - {question: q, expected_source: none, expected_substring: x}')).toContain('question 1 (expected_substring)');
  });

  it('refuses a file without questions, and YAML that does not parse', () => {
    expect(problemsOf('corpus: .')).toContain('questions: Required');
    expect(problemsOf('questions: []')).toContain('needs at least one question');
    expect(problemsOf('questions: [unclosed')).toContain('not valid YAML');
  });

  it('says which file cannot be read', async () => {
    await expect(loadGoldenSet(resolve('/nonexistent/set.yaml'), root)).rejects.toThrow(/set\.yaml:\n {2}- cannot be read/);
  });

  it('accepts the committed golden sets', async () => {
    const repository = resolve(import.meta.dirname, '../..');
    for (const name of ['project-docs', 'nimbus-faq']) {
      const set = await loadGoldenSet(resolve(repository, `eval/golden/${name}.yaml`), repository);
      expect(set.corpus, name).toBeDefined();
      expect(set.questions.some((question) => question.expectedSource === undefined), name).toBe(true);
    }
  });
});

describe('a golden set with its own gate', () => {
  const root = resolve('/repo');
  const questions = 'questions: [{question: q, expected_source: README.md}]';

  it('reads the thresholds and the reason', () => {
    const set = parseGoldenSet(`gate: {min_hit5: 0.7, min_mrr: 0.55, why: sparse only}\n${questions}`, 's.yaml', root);
    expect(set.gate).toEqual({ minHit5: 0.7, minMrr: 0.55, why: 'sparse only' });
  });

  it('refuses a gate without a reason or out of 0..1', () => {
    expect(() => parseGoldenSet(`gate: {min_hit5: 0.7}\n${questions}`, 's.yaml', root)).toThrow(/gate.why/);
    expect(() => parseGoldenSet(`gate: {min_hit5: 1.5, why: x}\n${questions}`, 's.yaml', root)).toThrow(/gate.min_hit5/);
  });

  it('is absent when the file sets none', () => {
    expect(parseGoldenSet(questions, 's.yaml', root).gate).toBeUndefined();
    expect(parseGoldenSet(questions, 's.yaml', root).hybridGate).toBeUndefined();
  });

  it('reads a separate gate for runs with a dense model, with its own reason', () => {
    const set = parseGoldenSet(`gate: {min_hit5: 0.7, why: sparse only}\nhybrid_gate: {min_hit5: 0.85, min_mrr: 0.7, why: measured with MiniLM}\n${questions}`, 's.yaml', root);
    expect(set.gate).toEqual({ minHit5: 0.7, minMrr: undefined, why: 'sparse only' });
    expect(set.hybridGate).toEqual({ minHit5: 0.85, minMrr: 0.7, why: 'measured with MiniLM' });
    expect(() => parseGoldenSet(`hybrid_gate: {min_mrr: 2, why: x}\n${questions}`, 's.yaml', root)).toThrow(/hybrid_gate.min_mrr/);
  });
});
