/**
 * `pnpm mcp`: the real stdio server process (tsx, as the script runs it) driven by the SDK's own client,
 * over an index written to RAG_DATA_DIR beforehand. Also checks that stdout carries the protocol only.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createLogger } from '@rag/core';
import { LanceDbStore } from '@rag/core/embedded';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handbookFolder, ingestFolder } from './test-stack.ts';

const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url));
let dataDir: string;
let client: Client;
let stderr = '';

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rag-mcp-stdio-'));
  const store = new LanceDbStore({ dataDir, collection: 'mcp-test' });
  await store.open(null);
  await ingestFolder(handbookFolder, store, undefined, createLogger('silent'));
  await store.close();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', 'services/retrieval/src/mcp/server.ts'],
    cwd: repositoryRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', RAG_DATA_DIR: dataDir, RAG_COLLECTION: 'mcp-test', LOG_LEVEL: 'info', LANCEDB_LOG: 'error' },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (data: Buffer) => (stderr += data.toString()));
  client = new Client({ name: 'rag-test', version: '1.0.0' });
  // Any byte on stdout that is not JSON-RPC would fail the client here.
  await client.connect(transport);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('pnpm mcp (stdio)', () => {
  it('serves the tools over the index in RAG_DATA_DIR, logging to stderr', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['ask', 'get_passage', 'list_sources', 'search']);
    const search: any = await client.callTool({ name: 'search', arguments: { query: 'how long are snapshots kept?', k: 2 } });
    expect(search.structuredContent.passages[0].source).toBe('backups.md');
    const sources: any = await client.callTool({ name: 'list_sources', arguments: {} });
    expect(sources.structuredContent.sources.map((s: any) => s.source)).toContain('ops/alerts.md');
    const passage: any = await client.callTool({ name: 'get_passage', arguments: { source: 'backups.md', chunk_index: 0 } });
    expect(passage.structuredContent.passage.text).toContain('35 days');
    const asked: any = await client.callTool({ name: 'ask', arguments: { question: 'How long are snapshots kept?' } });
    expect(asked.structuredContent.citations[0].source).toBe('backups.md');
    expect(stderr).toContain('MCP server ready on stdio');
  });

  it('answers bad arguments with a tool error', async () => {
    const result: any = await client.callTool({ name: 'get_passage', arguments: { source: 'backups.md', chunk_index: 99 } });
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content[0].text).error.code).toBe('RAG_PASSAGE_NOT_FOUND');
  });
});
