/**
 * MCP over streamable HTTP at /mcp: the SDK's own client against the real app on port 0, with a keys file
 * and a corpus whose ops/ folder is restricted to the `oncall` group.
 */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey, parseApiKeys } from '../src/auth/api-keys.ts';
import { handbookFolder, readJson, startTestStack, type TestStack } from './test-stack.ts';

const ONCALL_KEY = 'sk-oncall-7d2e41';
const PUBLIC_KEY = 'sk-public-0b9c3a';
const keysFile = `
keys:
  - {name: oncall, sha256: ${hashApiKey(ONCALL_KEY)}, groups: [oncall]}
  - {name: public, sha256: ${hashApiKey(PUBLIC_KEY)}, groups: []}
`;

let folder: string;
let stack: TestStack;
const clients: Client[] = [];

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rag-mcp-corpus-'));
  await cp(handbookFolder, folder, { recursive: true });
  await writeFile(join(folder, '.rag-access.yaml'), 'rules:\n  - {path: "ops/**", groups: [oncall]}\n');
  stack = await startTestStack({ folder, apiKeys: parseApiKeys(keysFile, 'keys.yaml') });
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await stack?.close();
  await rm(folder, { recursive: true, force: true });
});

async function connect(key: string | undefined): Promise<Client> {
  const client = new Client({ name: 'rag-test', version: '1.0.0' });
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp`), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

/** Tool results are checked field by field; `any` keeps those checks short. */
async function call(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  return client.callTool({ name, arguments: args });
}

describe('MCP over streamable HTTP', () => {
  it('lists the four tools with their input schemas', async () => {
    const client = await connect(PUBLIC_KEY);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['ask', 'get_passage', 'list_sources', 'search']);
    const search = tools.find((tool) => tool.name === 'search')!;
    expect(search.inputSchema.required).toEqual(['query']);
    expect(Object.keys(search.inputSchema.properties ?? {})).toEqual(['query', 'k', 'source_prefix', 'filter', 'max_per_source', 'freshness']);
  });

  it('search returns passages as structured content and as text, within the key\'s groups', async () => {
    const oncall = await call(await connect(ONCALL_KEY), 'search', { query: 'when is the on-call engineer paged?', k: 3 });
    expect(oncall.isError).toBeFalsy();
    expect(oncall.structuredContent.passages[0]).toMatchObject({ source: 'ops/alerts.md', heading_path: expect.stringContaining('Paging policy'), chunk_index: expect.any(Number) });
    expect(oncall.structuredContent.passages[0].text).toContain('error rate');
    expect(oncall.content[0].text).toContain('[ops/alerts.md#');

    const outsider = await call(await connect(PUBLIC_KEY), 'search', { query: 'when is the on-call engineer paged?', k: 5 });
    expect(outsider.structuredContent.passages.map((p: any) => p.source)).not.toContain('ops/alerts.md');
  });

  it('search narrows to a source prefix', async () => {
    const result = await call(await connect(ONCALL_KEY), 'search', { query: 'days', source_prefix: 'onboarding' });
    expect(result.structuredContent.passages.length).toBeGreaterThan(0);
    for (const passage of result.structuredContent.passages) expect(passage.source).toBe('onboarding.md');
  });

  it('ask answers with citations, and says when the documents do not cover the question', async () => {
    const client = await connect(PUBLIC_KEY);
    const covered = await call(client, 'ask', { question: 'How many days a week can I work from home?' });
    expect(covered.structuredContent).toMatchObject({ mode: 'extractive', covered: true });
    expect(covered.structuredContent.citations[0]).toMatchObject({ source: 'onboarding.md', label: expect.stringMatching(/^\[onboarding\.md#\d+\]$/) });
    expect(covered.content[0].text).toContain('three days');
    const uncovered = await call(client, 'ask', { question: 'What is the recipe for a chocolate cake?' });
    expect(uncovered.structuredContent).toMatchObject({ covered: false, citations: [] });
  });

  it('list_sources lists the documents the key may read, with chunk counts', async () => {
    const mine = await call(await connect(ONCALL_KEY), 'list_sources', {});
    expect(mine.structuredContent.sources.map((s: any) => s.source)).toContain('ops/alerts.md');
    const theirs = await call(await connect(PUBLIC_KEY), 'list_sources', {});
    const sources = theirs.structuredContent.sources.map((s: any) => s.source);
    expect(sources).toEqual(['backups.md', 'onboarding.md']);
    expect(theirs.structuredContent.sources[0].chunks).toBeGreaterThan(0);
  });

  it('get_passage reads a passage with its neighbours; a hidden one is a tool error with our code', async () => {
    const found = await call(await connect(ONCALL_KEY), 'get_passage', { source: 'ops/alerts.md', chunk_index: 0 });
    expect(found.structuredContent.passage).toMatchObject({ source: 'ops/alerts.md', chunk_index: 0 });
    expect(found.structuredContent.before).toEqual([]);
    expect(found.structuredContent.after.length).toBeGreaterThan(0);
    const hidden = await call(await connect(PUBLIC_KEY), 'get_passage', { source: 'ops/alerts.md', chunk_index: 0 });
    expect(hidden.isError).toBe(true);
    expect(JSON.parse(hidden.content[0].text).error.code).toBe('RAG_PASSAGE_NOT_FOUND');
  });

  it('needs a key like every data route', async () => {
    await expect(connect(undefined)).rejects.toThrow(/401|RAG_UNAUTHENTICATED/);
    const response = await fetch(`${stack.baseUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(401);
    expect((await readJson(response)).error.code).toBe('RAG_UNAUTHENTICATED');
  });
});
