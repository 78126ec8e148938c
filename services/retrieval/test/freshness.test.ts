/**
 * The recency boost over HTTP and MCP, in both stores (the embedded LanceDB stack and the production stack on the
 * fake Qdrant, which evaluates Qdrant's formula query with its own code): two versions of one policy, the older file
 * wording it closer to the question so that it ranks first; `freshness` puts the newer one first on /search, /chat,
 * /v1/chat/completions and the MCP tools, and a malformed `freshness` is a 400 naming the field.
 */
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { storesOver, useCorpusFolder, useStack, useStackWithMcp } from './corpus-stacks.ts';
import { postJson } from './test-stack.ts';

const QUESTION = 'How many vacation days do employees get per year?';
const OLD = 'policy/vacation-2024.md';
const NEW = 'policy/vacation.md';
/**
 * Sparse only (one leg: first 1/2, second 1/3) the newer version needs a weight above 1/6 to pass the older one;
 * hybrid (first in both legs 1, second 2/3) above 1/3.
 */
const BOOST = { half_life_days: 30, weight: 0.5 };

async function writeCorpus(folder: string): Promise<void> {
  await mkdir(join(folder, 'policy'), { recursive: true });
  const day = 86_400_000;
  await writeFile(join(folder, OLD), '# Vacation policy\n\nEmployees get 25 vacation days per year. Vacation days per year are fixed for employees.\n');
  await writeFile(join(folder, NEW), '# Vacation policy\n\nFrom 2026 employees get 28 vacation days a year.\n');
  await writeFile(join(folder, 'policy', 'expenses.md'), '# Expenses\n\nEmployees file expenses within 30 days.\n');
  const old = new Date(Date.now() - 400 * day);
  await utimes(join(folder, OLD), old, old);
}

const folder = useCorpusFolder('rag-freshness-', writeCorpus);

describe.each(storesOver(folder))('freshness on /search (%s)', (_, start) => {
  const stack = useStack(start);

  const search = async (body: Record<string, unknown>) => {
    const response = await postJson(stack.baseUrl, '/search', { query: QUESTION, k: 3, ...body });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.results as Array<{ source: string; score: number }>;
  };

  it('is off by default, and puts the newer version first when asked', async () => {
    expect((await search({}))[0]!.source).toBe(OLD);
    const boosted = await search({ freshness: BOOST });
    expect(boosted[0]!.source).toBe(NEW);
    // The same rank scores with a negligible weight: the bonus shows as the difference, 0.5 · 0.5^(~0 days / 30)
    // for the newer version, 0.5 · 0.5^(400 / 30) ≈ 0.00005 for the older one.
    const ranked = await search({ freshness: { half_life_days: 30, weight: 1e-9 } });
    const scoreOf = (results: Array<{ source: string; score: number }>, source: string) => results.find((result) => result.source === source)!.score;
    expect(scoreOf(boosted, NEW) - scoreOf(ranked, NEW)).toBeCloseTo(0.5, 4);
    expect(scoreOf(boosted, OLD) - scoreOf(ranked, OLD)).toBeCloseTo(0, 3);
    // A small weight does not overturn the ranking: it only breaks near ties.
    expect((await search({ freshness: { half_life_days: 30, weight: 0.05 } }))[0]!.source).toBe(OLD);
  });

  it('applies after the rerank too (k 2 of 3 candidates: the production stack reranks them, older first)', async () => {
    const plain = await postJson(stack.baseUrl, '/search', { query: QUESTION, k: 2 });
    const boosted = await postJson(stack.baseUrl, '/search', { query: QUESTION, k: 2, freshness: BOOST });
    expect(plain.body.results[0].source).toBe(OLD);
    expect(boosted.body.results[0].source).toBe(NEW);
    expect(boosted.body.reranked).toBe(plain.body.reranked);
  });

  it.each([
    [{ freshness: { half_life_days: 0 } }, 'freshness.half_life_days'],
    [{ freshness: { weight: 2 } }, 'freshness.weight'],
    [{ freshness: { weight: '0.1' } }, 'freshness.weight'],
    [{ freshness: { halflife: 3 } }, 'halflife'],
    [{ freshness: true }, 'freshness'],
  ])('refuses %j with a 400 naming the field', async (body, field) => {
    const response = await postJson(stack.baseUrl, '/search', { query: QUESTION, ...body });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('RAG_INVALID_FRESHNESS');
    expect(response.body.error.message).toContain(field);
  });
});

describe('freshness on /chat, /v1/chat/completions and the MCP tools', () => {
  const stack = useStackWithMcp(folder, 'freshness-test');

  it('/chat cites the newer version first, and refuses a bad freshness', async () => {
    const plain = await postJson(stack.baseUrl, '/chat', { query: QUESTION });
    expect(plain.body.citations[0].source).toBe(OLD);
    const fresh = await postJson(stack.baseUrl, '/chat', { query: QUESTION, freshness: BOOST });
    expect(fresh.status).toBe(200);
    expect(fresh.body.citations[0].source).toBe(NEW);
    const bad = await postJson(stack.baseUrl, '/chat', { query: QUESTION, freshness: { weight: -1 } });
    expect(bad.body.error.code).toBe('RAG_INVALID_FRESHNESS');
  });

  it('/v1/chat/completions takes it as an extra body field', async () => {
    const body = { model: 'rag', messages: [{ role: 'user', content: QUESTION }] };
    const fresh = await postJson(stack.baseUrl, '/v1/chat/completions', { ...body, freshness: BOOST });
    expect(fresh.status).toBe(200);
    const answer = JSON.stringify(fresh.body);
    expect(answer.indexOf(NEW)).toBeGreaterThan(-1);
    expect(answer.indexOf(OLD) === -1 || answer.indexOf(NEW) < answer.indexOf(OLD)).toBe(true);
    const bad = await postJson(stack.baseUrl, '/v1/chat/completions', { ...body, freshness: { half_life_days: 'a month' } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('RAG_INVALID_FRESHNESS');
  });

  it('the MCP search and ask tools take it', async () => {
    type Passages = { structuredContent: { passages: Array<{ source: string }> } };
    const plain = (await stack.mcp.callTool({ name: 'search', arguments: { query: QUESTION, k: 3 } })) as unknown as Passages;
    expect(plain.structuredContent.passages[0]!.source).toBe(OLD);
    const fresh = (await stack.mcp.callTool({ name: 'search', arguments: { query: QUESTION, k: 3, freshness: BOOST } })) as unknown as Passages;
    expect(fresh.structuredContent.passages[0]!.source).toBe(NEW);
    const asked = (await stack.mcp.callTool({ name: 'ask', arguments: { question: QUESTION, freshness: BOOST } })) as unknown as { structuredContent: { citations: Array<{ source: string }> } };
    expect(asked.structuredContent.citations[0]!.source).toBe(NEW);
  });
});
