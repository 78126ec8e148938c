/**
 * Document titles over HTTP, in both stores (the embedded LanceDB stack and the production stack on the fake Qdrant):
 * each /search result carries its document's `title` (a Markdown file's first H1, an HTML page's <title>), and
 * `filter.title` keeps the documents whose title matches a case-insensitive pattern, inside the store's query; so
 * do the MCP search tool's passages and filter.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { HtmlConverter } from '@rag/core/ingestion';
import { startProductionStack } from './production-stack.ts';
import { postJson, startTestStack } from './test-stack.ts';

let folder = '';

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rag-titles-'));
  await writeFile(join(folder, 'rollback.md'), '## Overview\n\n# Rollback runbook\n\nRoll back a failed deployment with the previous revision.\n');
  await writeFile(join(folder, 'page.html'), '<html><head><title>Deployment FAQ &amp; tips</title></head><body><h1>FAQ</h1><p>A deployment can be rolled back from the history tab.</p></body></html>');
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe.each([
  ['LanceDB', () => startTestStack({ folder, converters: [new HtmlConverter()] })],
  ['Qdrant', () => startProductionStack({ folder, converters: [new HtmlConverter()] })],
])('document titles on /search (%s)', (_, start) => {
  let stack: { baseUrl: string; close(): Promise<void> };
  beforeAll(async () => {
    stack = await start();
  }, 60_000);
  afterAll(async () => stack?.close());

  const search = async (body: Record<string, unknown>) => {
    const response = await postJson(stack.baseUrl, '/search', { query: 'roll back a deployment', k: 5, ...body });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.results as Array<{ source: string; title?: string }>;
  };

  it('returns each result with its title', async () => {
    const titles = Object.fromEntries((await search({})).map((result) => [result.source, result.title]));
    expect(titles).toEqual({ 'rollback.md': 'Rollback runbook', 'page.html': 'Deployment FAQ & tips' });
  });

  it('the MCP search tool returns titles and takes filter.title', async () => {
    const mcp = new Client({ name: 'title-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp`)));
    try {
      type Passages = { structuredContent: { passages: Array<{ source: string; title?: string }> } };
      const found = (await mcp.callTool({ name: 'search', arguments: { query: 'roll back a deployment', filter: { title: '*runbook' } } })) as unknown as Passages;
      expect(found.structuredContent.passages.map((passage) => [passage.source, passage.title])).toEqual([['rollback.md', 'Rollback runbook']]);
    } finally {
      await mcp.close();
    }
  });

  it('filters on a title pattern', async () => {
    expect((await search({ filter: { title: '*faq*' } })).map((result) => result.source)).toEqual(['page.html']);
    expect((await search({ filter: { title: 'rollback ?unbook' } })).map((result) => result.source)).toEqual(['rollback.md']);
    expect(await search({ filter: { title: 'nothing*' } })).toEqual([]);
  });
});
