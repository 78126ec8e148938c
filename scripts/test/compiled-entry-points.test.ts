/**
 * The compiled bundles, run with plain `node` from a folder outside the repository: no node_modules can
 * be found from there, exactly as in the production images, which ship dist/ alone. The production
 * adapters (Qdrant, TEI, gateway) are pointed at local fakes that speak those APIs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeServer, within } from '../../packages/core/test/adapters/fake-server.ts';
import { makeCorpus, SUPPORTED_DOCUMENTS } from '../../packages/core/test/ingest/fixture-folder.ts';
import { FakeGateway } from '../../services/retrieval/test/fakes/fake-gateway.ts';
import { FakeQdrant } from '../../services/retrieval/test/fakes/fake-qdrant.ts';
import { teiEmbed, teiRerank } from '../../services/retrieval/test/fakes/fake-tei.ts';
import { buildAll } from '../build.ts';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let outRoot = '';
let corpus: Awaited<ReturnType<typeof makeCorpus>>;
let productionEnv: Record<string, string> = {};

function startNode(script: string, args: string[], env: Record<string, string>): ChildProcess {
  // No inherited variables beyond PATH: the bundle must run on what the image's environment gives it.
  return spawn(process.execPath, [join(outRoot, script), ...args], { cwd: outRoot, env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env } });
}

function runToEnd(child: ChildProcess): Promise<Run> {
  const run: Run = { code: null, stdout: '', stderr: '' };
  child.stdout?.on('data', (data: Buffer) => (run.stdout += data.toString()));
  child.stderr?.on('data', (data: Buffer) => (run.stderr += data.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ ...run, code })));
}

function listeningUrl(child: ChildProcess): Promise<string> {
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (data: Buffer) => {
      output += data.toString();
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code} before listening: ${output}`)));
  });
}

beforeAll(async () => {
  outRoot = await mkdtemp(join(tmpdir(), 'rag-dist-'));
  await buildAll(outRoot);
  corpus = await makeCorpus();
  const qdrant = new FakeQdrant();
  const gateway = new FakeGateway();
  productionEnv = {
    QDRANT_URL: (await startFakeServer(qdrant.handle)).url,
    EMBED_URL: (await startFakeServer(teiEmbed)).url,
    EMBED_MODEL: 'fake/hashed-bag-of-words',
    RERANK_URL: (await startFakeServer(teiRerank)).url,
    GATEWAY_URL: (await startFakeServer(gateway.handle)).url,
  };
}, 120_000);

afterAll(async () => {
  await corpus?.remove();
  if (outRoot) await rm(outRoot, { recursive: true, force: true });
});

describe('node dist/ingest/cli.js, outside the repository', () => {
  it('converts every supported format with the bundled converters and writes through the production adapters', async () => {
    const run = await within(runToEnd(startNode('ingest/cli.js', [corpus.folder], productionEnv)), 60_000);
    expect(run.stderr).not.toMatch(/Cannot find (module|package)/);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^done: ${SUPPORTED_DOCUMENTS.length + 1} files, \\d+ chunks, \\d+ upserts, 0 deletes, 1 skipped, 0 errors$`, 'm'));
  });

  it('refuses the embedded store with a named error, as the images carry no LanceDB', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'rag-data-'));
    const run = await within(runToEnd(startNode('ingest/cli.js', [corpus.folder], { RAG_DATA_DIR: dataDir })), 60_000);
    await rm(dataDir, { recursive: true, force: true });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('RAG_ADAPTER_NOT_INSTALLED');
    expect(run.stderr).toContain('@lancedb/lancedb');
  });
});

describe('node dist/retrieval/server.js, outside the repository', () => {
  let server: ChildProcess;
  let baseUrl = '';

  beforeAll(async () => {
    server = startNode('retrieval/server.js', [], { ...productionEnv, PORT: '0' });
    baseUrl = await within(listeningUrl(server), 30_000);
  }, 60_000);

  afterAll(() => {
    if (server.exitCode === null) server.kill('SIGKILL');
  });

  it('serves /search with the fused and reranked passages of the ingested documents', async () => {
    const response = await fetch(`${baseUrl}/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'How is credential number 3 rotated?', k: 3 }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { results: Array<{ source: string }> };
    expect(body.results).toHaveLength(3);
    expect(body.results[0]!.source).toBe('guide.md');
  });

  it('serves the web page and its script from dist/web', async () => {
    const page = await fetch(`${baseUrl}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script src="/app.js"');
    const script = await fetch(`${baseUrl}/app.js`);
    expect(script.status).toBe(200);
    // The page's libraries, copied into dist/web/vendor/ by the build.
    for (const library of ['/vendor/marked.js', '/vendor/purify.js']) expect((await fetch(`${baseUrl}${library}`)).status).toBe(200);
  });

  it('exports its metrics', async () => {
    const metrics = await (await fetch(`${baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/^rag_retrieval_stage_duration_count\{stage="rerank"\} 1$/m);
  });

  it('exits 0 on SIGTERM', async () => {
    const exit = runToEnd(server);
    server.kill('SIGTERM');
    expect((await within(exit, 30_000)).code).toBe(0);
  });
});

describe('node dist/mcp/server.js, outside the repository', () => {
  it('answers MCP tool calls over stdio through the production adapters', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(outRoot, 'mcp/server.js')],
      cwd: outRoot,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...productionEnv },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (data: Buffer) => (stderr += data.toString()));
    const client = new Client({ name: 'dist-test', version: '1.0.0' });
    try {
      await within(client.connect(transport), 30_000);
      const search = (await client.callTool({ name: 'search', arguments: { query: 'How is credential number 3 rotated?', k: 3 } })) as { structuredContent?: { passages: Array<{ source: string }> } };
      expect(search.structuredContent?.passages[0]?.source).toBe('guide.md');
      const sources = (await client.callTool({ name: 'list_sources', arguments: {} })) as { structuredContent?: { sources: Array<{ source: string }> } };
      expect(sources.structuredContent?.sources.map((s) => s.source)).toContain('guide.md');
      // Qdrant's retrieve by point id: the passage and its neighbour.
      const passage = (await client.callTool({ name: 'get_passage', arguments: { source: 'guide.md', chunk_index: 0 } })) as { structuredContent?: { passage: { chunk_index: number; text: string }; after: unknown[] } };
      expect(passage.structuredContent?.passage.chunk_index).toBe(0);
      expect(passage.structuredContent?.passage.text.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
    expect(stderr).not.toMatch(/Cannot find (module|package)/);
  }, 60_000);
});
