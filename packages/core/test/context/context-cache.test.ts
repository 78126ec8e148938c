/**
 * The context cache keeps what the gateway wrote about a document no longer than the document is indexed
 * with the same access groups: a cached context is served to its own document only while its groups stay
 * the same, and the ingest's prune removes the contexts of deleted documents, from the file too.
 */
import { mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeFakeServers, sendJson, startFakeServer, type FakeServer } from '../adapters/fake-server.ts';
import { ContextCache, contextCacheKey, createLogger, ingest, LlmContexts, OpenAiGatewayChatModel, type IngestSummary } from '../../src/index.ts';
import { LanceDbStore } from '../../src/embedded.ts';
import { ConverterRegistry, LocalDirectorySource, MarkdownPassthrough } from '../../src/ingestion.ts';

let folder: string;
let dataDir: string;
let cacheFile: string;
let gateway: FakeServer;
const stores: LanceDbStore[] = [];

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rag-context-cache-corpus-'));
  dataDir = await mkdtemp(join(tmpdir(), 'rag-context-cache-data-'));
  cacheFile = join(dataDir, 'context-cache.jsonl');
  await writeFile(join(folder, 'guide.md'), '# Guide\n\nSync waves order the resources of an application.\n');
  await writeFile(join(folder, 'pay.md'), '# Payroll\n\nSalary bands are reviewed every March.\n');
  gateway = await startFakeServer((request, response) => {
    const prompt = (request.body as { messages: Array<{ content: string }> }).messages.at(-1)?.content ?? '';
    const content = prompt.includes('Salary bands') ? 'About the confidential salary bands.' : 'About sync waves.';
    sendJson(response, 200, { choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
  });
});

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  await closeFakeServers();
  await rm(folder, { recursive: true, force: true });
  await rm(dataDir, { recursive: true, force: true });
});

const KEY = contextCacheKey({ documentHash: 'hash-pay', chunkText: 'Salary bands', model: 'm', promptVersion: 'p' });

describe('ContextCache', () => {
  it('serves a context to its own document only, and only while the document keeps its groups', async () => {
    const cache = await ContextCache.open(cacheFile);
    await cache.put(KEY, 'About the salary bands.', { source: 'pay.md', groups: ['hr', 'finance'] });
    for (const reopened of [cache, await ContextCache.open(cacheFile)]) {
      expect(reopened.get(KEY, { source: 'pay.md', groups: ['finance', 'hr'] })).toBe('About the salary bands.');
      expect(reopened.get(KEY, { source: 'pay.md', groups: ['hr'] }), 'groups changed').toBeUndefined();
      expect(reopened.get(KEY, { source: 'pay.md', groups: [] }), 'made public').toBeUndefined();
      expect(reopened.get(KEY, { source: 'copy-of-pay.md', groups: ['finance', 'hr'] }), 'another document').toBeUndefined();
    }
  });

  it('forgets the contexts of documents, in memory and in its file, keeping the others', async () => {
    const cache = await ContextCache.open(cacheFile);
    await cache.put(KEY, 'About the salary bands.', { source: 'pay.md', groups: ['hr'] });
    await cache.put(KEY, 'About the copy.', { source: 'copy.md', groups: [] });
    await cache.forget(['pay.md']);
    expect(cache.get(KEY, { source: 'pay.md', groups: ['hr'] })).toBeUndefined();
    const reopened = await ContextCache.open(cacheFile);
    expect(reopened.size).toBe(1);
    expect(reopened.get(KEY, { source: 'copy.md', groups: [] })).toBe('About the copy.');
    expect(await readFile(cacheFile, 'utf8')).not.toContain('salary');
  });

  it('serves no line written before lines named their document, and drops such lines when it rewrites the file', async () => {
    await writeFile(cacheFile, `${JSON.stringify({ key: KEY, context: 'About the salary bands.' })}\n`);
    const cache = await ContextCache.open(cacheFile);
    expect(cache.get(KEY, { source: 'pay.md', groups: [] })).toBeUndefined();
    await cache.put(KEY, 'About the copy.', { source: 'copy.md', groups: [] });
    await cache.put(KEY, 'About the second copy.', { source: 'gone.md', groups: [] });
    await cache.forget(['gone.md']);
    expect(await readFile(cacheFile, 'utf8')).toBe(`${JSON.stringify({ key: KEY, context: 'About the copy.', source: 'copy.md', groups: [] })}\n`);
  });
});

describe('the context cache through the ingest (CONTEXT_MODE=llm)', () => {
  async function run(collection: string): Promise<IngestSummary> {
    const chatModel = new OpenAiGatewayChatModel({ url: gateway.url, model: 'qwen3-4b-cpu', retries: 0 });
    const contexts = new LlmContexts({ chatModel, cache: await ContextCache.open(cacheFile), logger: createLogger('silent'), concurrency: 2, maxTokens: 1_000_000, maxDocumentChars: 24_000 });
    const store = new LanceDbStore({ dataDir, collection });
    stores.push(store);
    await store.open(null, { context: contexts.lock });
    return ingest({
      source: new LocalDirectorySource(folder),
      store,
      contexts,
      converters: new ConverterRegistry([new MarkdownPassthrough()]),
      chunking: { chunkSize: 300, chunkOverlap: 50 },
      embedBatchSize: 8,
      concurrency: 2,
      prune: true,
      forcePrune: true,
      dryRun: false,
      logger: createLogger('silent'),
    });
  }

  it('drops the cached contexts of a document the run prunes', async () => {
    await run('docs');
    expect(await readFile(cacheFile, 'utf8')).toContain('confidential salary bands');
    await unlink(join(folder, 'pay.md'));
    const pruned = await run('docs');
    expect(pruned.deletes).toBeGreaterThan(0);
    expect(await readFile(cacheFile, 'utf8')).not.toContain('confidential salary bands');
    expect(await readFile(cacheFile, 'utf8')).toContain('About sync waves.');
  });

  it('asks again for the contexts of a document whose groups changed, when a rebuild needs them', async () => {
    const first = await run('docs');
    const asked = gateway.requests.length;
    expect(first.contexts.written).toBe(2);
    await writeFile(join(folder, '.rag-access.yaml'), 'rules:\n  - path: "pay.md"\n    groups: [hr]\n');
    const restricted = await run('docs');
    expect(restricted.groupUpdates).toBe(1);

    const rebuilt = await run('docs-v2');
    expect(rebuilt.contexts).toMatchObject({ cached: 1, written: 1 });
    expect(gateway.requests.length - asked).toBe(1);
    const lastPrompt = (gateway.requests.at(-1)!.body as { messages: Array<{ content: string }> }).messages.at(-1)!.content;
    expect(lastPrompt).toContain('Salary bands');
  });
});
