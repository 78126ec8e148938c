/**
 * `rag-ingest --shards N` as a pod of a Kubernetes Indexed Job runs it: the index comes from
 * JOB_COMPLETION_INDEX, which the Job controller sets in each pod of an Indexed Job
 * (https://kubernetes.io/docs/tasks/job/indexed-parallel-processing-static/: "the control plane
 * automatically sets the downward API to expose the index in the JOB_COMPLETION_INDEX environment variable").
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inShard, loadConfig } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guide } from '../../packages/core/test/ingest/fixture-folder.ts';
import { shardOption } from '../src/shard-option.ts';
import { runIngestCli, type CliRun } from './ingest-cli.ts';

const NAMES = Array.from({ length: 8 }, (_, index) => `page-${index}.md`);

let dataDir: string;
let folder: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rag-shard-cli-data-'));
  folder = await mkdtemp(join(tmpdir(), 'rag-shard-cli-'));
  for (const name of NAMES) await writeFile(join(folder, name), guide(1, name));
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
  await rm(folder, { recursive: true, force: true });
});

function ingestCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runIngestCli(dataDir, args, env);
}

describe('rag-ingest in an Indexed Job', () => {
  it('syncs the share of JOB_COMPLETION_INDEX, says so, then a --prune-only run prunes what the bucket lost', async () => {
    const mine = NAMES.filter((name) => inShard(name, { index: 1, count: 3 }));

    const shard = await ingestCli([folder], { INGEST_SHARDS: '3', JOB_COMPLETION_INDEX: '1' });

    expect(shard.stderr).not.toMatch(/failed:|RAG_/);
    expect(shard.code).toBe(0);
    const [shardLine, doneLine] = shard.stdout.trimEnd().split('\n').slice(-2);
    expect(shardLine).toBe(`shard 1/3: ${mine.length} of ${NAMES.length} listed documents; pruning is left to one --prune-only run after every shard`);
    expect(doneLine).toMatch(new RegExp(`^done: ${mine.length} files, \\d+ chunks, \\d+ upserts, 0 deletes, 0 skipped, 0 errors$`));

    await rm(join(folder, mine[0]!));
    const pruned = await ingestCli([folder, '--prune-only'], { INGEST_SHARDS: '3', JOB_COMPLETION_INDEX: '1' });
    expect(pruned.code).toBe(0);
    expect(pruned.stdout.trimEnd().split('\n').at(-1)).toMatch(new RegExp(`^done: ${NAMES.length - 1} files, 0 chunks, 0 upserts, [1-9]\\d* deletes, 0 skipped, 0 errors$`));
  });

  it('refuses --shards without an index, before touching the store (exit 2)', async () => {
    const run = await ingestCli([folder, '--shards', '4']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('RAG_CONFIG_INVALID');
    expect(run.stderr).toContain('JOB_COMPLETION_INDEX');
  });
});

describe('the share a run takes', () => {
  const config = (env: Record<string, string>) => loadConfig(env);

  it('takes --shard, or --shards / INGEST_SHARDS with JOB_COMPLETION_INDEX, and nothing without them', () => {
    expect(shardOption({ shard: '2/4' }, config({}))).toEqual({ index: 2, count: 4 });
    expect(shardOption({ shards: '4' }, config({ JOB_COMPLETION_INDEX: '3' }))).toEqual({ index: 3, count: 4 });
    expect(shardOption({}, config({ INGEST_SHARDS: '5', JOB_COMPLETION_INDEX: '0' }))).toEqual({ index: 0, count: 5 });
    expect(shardOption({}, config({ JOB_COMPLETION_INDEX: '2' }))).toBeUndefined();
  });

  it('refuses an index out of range, a malformed share, and a prune-only run given a share', () => {
    expect(() => shardOption({ shards: '4' }, config({ JOB_COMPLETION_INDEX: '4' }))).toThrow(/from 0 to 3/);
    expect(() => shardOption({ shard: '1-4' }, config({}))).toThrow(/INDEX\/COUNT/);
    expect(() => shardOption({ shard: '0/0' }, config({}))).toThrow(/1 or more/);
    expect(() => shardOption({ 'prune-only': true, shard: '0/2' }, config({}))).toThrow(/whole source/);
    // The environment of an Indexed Job's pod does not turn a prune-only run into a shard.
    expect(shardOption({ 'prune-only': true }, config({ INGEST_SHARDS: '4', JOB_COMPLETION_INDEX: '1' }))).toBeUndefined();
  });
});
