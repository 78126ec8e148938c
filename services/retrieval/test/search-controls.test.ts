/**
 * Search controls over HTTP, in both stores (the embedded LanceDB stack and the production stack on the fake
 * Qdrant): `filter` (source glob, type, modified time, custom fields from the folder's .rag-metadata.yaml) fills
 * the top k with matching passages, `max_per_source` spreads the results over documents, and a malformed control
 * is a 400 naming the field.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { storesOver, useCorpusFolder, useStack, useStackWithMcp } from './corpus-stacks.ts';
import { postJson } from './test-stack.ts';

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

const folder = useCorpusFolder('rag-search-controls-', writeCorpus);

describe.each(storesOver(folder))('search controls on /search (%s)', (_, start) => {
  const stack = useStack(start);

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

describe('the same controls on /chat, /v1/chat/completions and the MCP tools', () => {
  const stack = useStackWithMcp(folder, 'search-controls-test');

  const docsOnly = { meta: { team: 'docs' } };
  const sourcesOf = (items: Array<{ source: string }>) => new Set(items.map((item) => item.source));

  it('/chat answers from the matching documents only, and refuses a bad filter', async () => {
    const response = await postJson(stack.baseUrl, '/chat', { query: 'Who approves a deployment?', filter: { source: 'ops/**' } });
    expect(response.status).toBe(200);
    expect(response.body.citations.length).toBeGreaterThan(0);
    expect([...sourcesOf(response.body.citations)].every((source) => source.startsWith('ops/'))).toBe(true);
    const docs = await postJson(stack.baseUrl, '/chat', { query: 'Who approves a deployment?', filter: docsOnly, max_per_source: 1 });
    expect([...sourcesOf(docs.body.citations)].every((source) => source.startsWith('team/'))).toBe(true);
    const bad = await postJson(stack.baseUrl, '/chat', { query: 'x', filter: { type: [] } });
    expect(bad.body.error.code).toBe('RAG_INVALID_FILTER');
  });

  it('/v1/chat/completions takes them as extra body fields', async () => {
    const body = { model: 'rag', messages: [{ role: 'user', content: 'Who approves a deployment?' }] };
    const filtered = await postJson(stack.baseUrl, '/v1/chat/completions', { ...body, filter: { source: 'ops/**' } });
    expect(filtered.status).toBe(200);
    expect(JSON.stringify(filtered.body)).not.toContain('team/');
    const bad = await postJson(stack.baseUrl, '/v1/chat/completions', { ...body, max_per_source: 'one' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('RAG_INVALID_MAX_PER_SOURCE');
  });

  it('the MCP search and ask tools take filter and max_per_source', async () => {
    const searched = (await stack.mcp.callTool({ name: 'search', arguments: { query: QUESTION, k: 5, max_per_source: 1 } })) as unknown as { structuredContent: { passages: Array<{ source: string }> } };
    expect(searched.structuredContent.passages).toHaveLength(4);
    expect(sourcesOf(searched.structuredContent.passages).size).toBe(4);
    const filtered = (await stack.mcp.callTool({ name: 'search', arguments: { query: QUESTION, filter: { source: 'team/**' } } })) as unknown as { structuredContent: { passages: Array<{ source: string }> } };
    expect(sourcesOf(filtered.structuredContent.passages)).toEqual(new Set(['team/notes.md', 'team/faq.markdown']));
    const asked = (await stack.mcp.callTool({ name: 'ask', arguments: { question: 'Who approves a deployment?', filter: { source: 'ops/**' } } })) as unknown as { structuredContent: { citations: Array<{ source: string }> } };
    expect([...sourcesOf(asked.structuredContent.citations)].every((source) => source.startsWith('ops/'))).toBe(true);
  });
});
