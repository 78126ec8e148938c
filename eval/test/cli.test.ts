import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repository = resolve(import.meta.dirname, '../..');
const tsx = resolve(repository, 'node_modules/.bin/tsx');

async function evalCli(args: string[], env: NodeJS.ProcessEnv = {}) {
  try {
    const { stdout, stderr } = await run(tsx, ['eval/src/cli.ts', ...args], { cwd: repository, env: { ...process.env, LOG_LEVEL: 'silent', ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

let out: string;
beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'rag-eval-cli-'));
});
afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

describe('pnpm eval (the CLI as a subprocess)', () => {
  it('exits 0 when the gate passes, and writes the Markdown report with its JSON beside it', async () => {
    const result = await evalCli(['--questions', 'eval/test/fixtures/mini.yaml', '--report', join(out, 'mini.md')], { RAG_DATA_DIR: out });
    expect(result.stderr).not.toContain('Gate failed');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('# Evaluation: mini');
    const markdown = await readFile(join(out, 'mini.md'), 'utf8');
    expect(markdown).toContain('| all in-scope | 4 | 1.000 | 1.000 | 1.000 |');
    const json = JSON.parse(await readFile(join(out, 'mini.json'), 'utf8'));
    expect(json.gate.passed).toBe(true);
    expect(json.questions).toHaveLength(5);
  });

  it('exits 1 when the gate fails', async () => {
    const result = await evalCli(['--questions', 'eval/test/fixtures/failing.yaml'], { RAG_DATA_DIR: out });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Gate failed for eval/test/fixtures/failing.yaml');
  });

  it('passes a gate of 1.0 when every answer ranks first (the thresholds are read from the flags)', async () => {
    const result = await evalCli(['--questions', 'eval/test/fixtures/mini.yaml', '--min-hit5', '1', '--min-mrr', '1'], { RAG_DATA_DIR: out });
    expect(result.code).toBe(0);
  });

  it('exits 2 with the question number when the golden set is invalid, and on bad flags', async () => {
    const invalid = join(out, 'invalid.yaml');
    await writeFile(invalid, 'questions:\n  - {question: ok, expected_source: a.md}\n  - {question: missing source}\n');
    const result = await evalCli(['--questions', invalid]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('question 2 (expected_source): Required');
    const badGate = await evalCli(['--questions', 'eval/test/fixtures/mini.yaml', '--min-hit5', '90']);
    expect(badGate.code).toBe(2);
    expect(badGate.stderr).toContain('--min-hit5 must be a number between 0 and 1');
  });
});

describe('pnpm eval with a dense model', () => {
  // The repository's own copy of the test model: a clone elsewhere has no ../shared.
  const model = resolve(repository, 'packages/core/test/fixtures/models/model2vec-test-bge-base-vq');

  it('gates on the set\'s hybrid_gate instead of its BM25 gate', async () => {
    // Nothing can be found (the expected source does not exist): a gate of 0 passes, any other fails.
    const set = join(out, 'hybrid-gated.yaml');
    await writeFile(set, 'corpus:\n  path: eval/test/fixtures/corpus\ngate: {min_hit5: 0, min_mrr: 0, why: bm25 gate}\nhybrid_gate: {min_hit5: 0.5, why: hybrid gate}\nquestions:\n  - {question: How often is the database copied?, expected_source: nowhere.md}\n');
    const sparse = await evalCli(['--questions', set], { RAG_DATA_DIR: out });
    expect(sparse.stdout).toContain('Why this gate: bm25 gate');
    expect(sparse.code).toBe(0);
    const hybrid = await evalCli(['--questions', set], { RAG_DATA_DIR: out, EMBED_MODEL: model, FUSION_WEIGHTS: 'dense:4,sparse:1' });
    expect(hybrid.stdout).toContain('Why this gate: hybrid gate');
    expect(hybrid.stdout).toContain('RRF (k 2, weights dense 4, sparse 1)');
    expect(hybrid.code).toBe(1);
  }, 240_000);

  it('--ladder writes the ladder and the tuning report for each set and model', async () => {
    const result = await evalCli(['--ladder', '--questions', 'eval/test/fixtures/mini.yaml', '--model', model, '--report-dir', out], { RAG_DATA_DIR: out });
    expect(result.code).toBe(0);
    const ladder = await readFile(join(out, 'ladder.md'), 'utf8');
    for (const mode of ['BM25 (sparse only)', 'dense only', 'hybrid, RRF k 2 (default)', 'hybrid, tuned RRF']) expect(ladder).toContain(mode);
    const tuning = JSON.parse(await readFile(join(out, 'fusion-tuning.json'), 'utf8'));
    expect(tuning[0]).toMatchObject({ set: 'mini', kind: 'golden', objective: 'MRR' });
    expect(tuning[0].folds).toHaveLength(2);
  }, 240_000);
});
