/**
 * Search controls over HTTP, in both stores (the embedded LanceDB stack and the production stack on the fake
 * Qdrant): `filter` (source glob, type, modified time, custom fields from the folder's .rag-metadata.yaml) fills
 * the top k with matching passages, `max_per_source` spreads the results over documents, and a malformed control
 * is a 400 naming the field.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProductionStack } from './production-stack.ts';
import { postJson, startTestStack } from './test-stack.ts';

const QUESTION = 'How do I roll back a deployment?';

/** ops/guide.md: 12 sections about rollbacks that outrank everything; three smaller documents match weakly. */
async function writeCorpus(folder: string): Promise<void> {
  await mkdir(join(folder, 'ops'), { recursive: true });
  await mkdir(join(folder, 'team'), { recursive: true });
  const sections = Array.from({ length: 12 }, (_, n) => `## Rollback ${n + 1}\n\n${'Roll back the deployment: a rollback restores the previous deployment revision. '.repeat(10)}\n`);
  await writeFile(join(folder, 'ops', 'guide.md'), `# Rollback guide\n\n${sections.join('\n')}`);
  await writeFile(join(folder, 'ops', 'checklist.md'), `# Checklist\n\n${'Before a deployment, check the previous revision. '.repeat(6)}\n`);
  await writeFile(join(folder, 'team', 'notes.md'), `# Notes\n\n${'The team reviews each deployment on Fridays. '.repeat(6)}\n`);
  await writeFile(join(folder, 'team', 'faq.markdown'), `# FAQ\n\n${'Who approves a deployment? The lead does. '.repeat(6)}\n`);
  await writeFile(join(folder, '.rag-metadata.yaml'), 'rules:\n  - path: "ops/**"\n    fields: {team: platform}\n  - path: "ops/checklist.md"\n    fields: {tier: gold}\n  - path: "team/**"\n    fields: {team: docs}\n');
}

interface Stack {
  baseUrl: string;
  close(): Promise<void>;
}

let folder = '';

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rag-search-controls-'));
  await writeCorpus(folder);
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

const stacks: Array<[string, () => Promise<Stack>]> = [
  ['LanceDB', () => startTestStack({ folder })],
  ['Qdrant', () => startProductionStack({ folder })],
];

describe.each(stacks)('search controls on /search (%s)', (_, start) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await start();
  }, 60_000);
  afterAll(async () => stack?.close());

  const search = async (body: Record<string, unknown>) => {
    const response = await postJson(stack.baseUrl, '/search', { query: QUESTION, k: 5, ...body });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return (response.body.results as Array<{ source: string }>).map((result) => result.source);
  };

  it('fills k with passages of the matching documents only', async () => {
    expect(new Set(await search({}))).toEqual(new Set(['ops/guide.md']));
    expect(new Set(await search({ filter: { meta: { team: 'docs' } } }))).toEqual(new Set(['team/notes.md', 'team/faq.markdown']));
    expect(await search({ filter: { source: 'ops/**', meta: { tier: ['gold', 'silver'] } } })).toEqual(['ops/checklist.md']);
    expect(new Set(await search({ filter: { type: 'markdown' } }))).toEqual(new Set(['team/faq.markdown']));
    expect(await search({ filter: { source: 'team/*.md' } })).toEqual(['team/notes.md']);
    expect(await search({ filter: { modified_after: '2999-01-01T00:00:00Z' } })).toEqual([]);
    expect((await search({ filter: { modified_before: '2999-01-01T00:00:00Z' } })).length).toBe(5);
  });

  it('max_per_source 1 gives every result from a different document', async () => {
    const sources = await search({ max_per_source: 1 });
    expect(sources.length).toBe(4);
    expect(new Set(sources).size).toBe(4);
    const two = await search({ max_per_source: 2 });
    expect(two.filter((source) => source === 'ops/guide.md')).toHaveLength(2);
  });

  it.each([
    [{ filter: { sauce: 'x' } }, 'RAG_INVALID_FILTER', 'sauce'],
    [{ filter: { modified_after: 'yesterday' } }, 'RAG_INVALID_FILTER', 'filter.modified_after'],
    [{ filter: { meta: { team: 3 } } }, 'RAG_INVALID_FILTER', 'filter.meta.team'],
    [{ filter: 'ops/**' }, 'RAG_INVALID_FILTER', 'filter'],
    [{ max_per_source: 0 }, 'RAG_INVALID_MAX_PER_SOURCE', 'max_per_source'],
  ])('refuses %j with a 400 naming the field', async (body, code, field) => {
    const response = await postJson(stack.baseUrl, '/search', { query: QUESTION, ...body });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe(code);
    expect(response.body.error.message).toContain(field);
  });
});
