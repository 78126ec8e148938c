import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeFakeServers, sendJson, startFakeServer, type FakeServer } from '../adapters/fake-server.ts';
import { ContextCache, createLogger, encodeQuery, ingest, LeadContexts, LlmContexts, NO_CONTEXT, OpenAiGatewayChatModel, PUBLIC_ONLY, type ChunkContexts, type IngestSummary } from '../../src/index.ts';
import { LanceDbStore } from '../../src/embedded.ts';
import { MarkdownPassthrough, ConverterRegistry, LocalDirectorySource } from '../../src/ingestion.ts';
import { guide } from '../ingest/fixture-folder.ts';

/** A word no document holds: a chunk found by it was found through its context. */
const CONTEXT_WORD = 'zeppelinology';

interface ChatBody {
  messages: Array<{ content: string }>;
}

let folder: string;
let dataDir: string;
let gateway: FakeServer;
/** Chunks whose prompt contains this text get a 500, as a failing vLLM replica would answer. */
let failChunksWith: string | undefined;
const stores: LanceDbStore[] = [];

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rag-context-corpus-'));
  dataDir = await mkdtemp(join(tmpdir(), 'rag-context-data-'));
  await writeFile(join(folder, 'guide.md'), guide(4));
  await writeFile(join(folder, 'faq.md'), '# Billing FAQ\n\nInvoices are sent on the first day of each month.\n\n## Refunds\n\nRefunds take five working days.\n');
  failChunksWith = undefined;
  gateway = await startFakeServer((request, response) => {
    const prompt = (request.body as ChatBody).messages.at(-1)?.content ?? '';
    const chunk = prompt.slice(prompt.indexOf('<chunk>'));
    if (failChunksWith && chunk.includes(failChunksWith)) return sendJson(response, 500, { error: { message: 'replica down', type: 'server_error' } });
    const content = `<think>hmm</think>This chunk is about ${CONTEXT_WORD} in the document.`;
    sendJson(response, 200, { choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } });
  });
});

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  await closeFakeServers();
  await rm(folder, { recursive: true, force: true });
  await rm(dataDir, { recursive: true, force: true });
});

async function llmContexts(): Promise<ChunkContexts> {
  const chatModel = new OpenAiGatewayChatModel({ url: gateway.url, model: 'qwen3-4b-cpu', retries: 0 });
  const cache = await ContextCache.open(join(dataDir, 'context-cache.jsonl'));
  return new LlmContexts({ chatModel, cache, logger: createLogger('silent'), concurrency: 2, maxTokens: 1_000_000, maxDocumentChars: 24_000 });
}

async function openStore(collection: string, contexts: ChunkContexts | undefined): Promise<LanceDbStore> {
  const store = new LanceDbStore({ dataDir, collection });
  stores.push(store);
  await store.open(null, { context: contexts?.lock ?? NO_CONTEXT });
  return store;
}

function run(store: LanceDbStore, contexts: ChunkContexts | undefined): Promise<IngestSummary> {
  return ingest({
    source: new LocalDirectorySource(folder),
    store,
    contexts,
    converters: new ConverterRegistry([new MarkdownPassthrough()]),
    chunking: { chunkSize: 300, chunkOverlap: 50 },
    embedBatchSize: 8,
    concurrency: 2,
    prune: true,
    dryRun: false,
    logger: createLogger('silent'),
  });
}

async function search(store: LanceDbStore, text: string) {
  return store.search({ sparse: encodeQuery(text), limit: 50, prefetchLimit: 50, visibleGroups: PUBLIC_ONLY });
}

describe('CONTEXT_MODE=llm', () => {
  it('stores the context apart from the text it makes searchable, and reports the tokens it cost', async () => {
    const store = await openStore('docs', await llmContexts());
    const summary = await run(store, await llmContexts());
    expect(summary.errors).toBe(0);
    expect(summary.contexts).toMatchObject({ written: summary.chunks, cached: 0, failed: 0, promptTokens: 100 * summary.chunks, completionTokens: 10 * summary.chunks });
    expect(summary.contextLine()).toContain(`${110 * summary.chunks} tokens`);
    const hits = await search(store, CONTEXT_WORD);
    expect(hits).toHaveLength(summary.chunks);
    for (const hit of hits) expect(hit.text).not.toContain(CONTEXT_WORD);
  });

  it('asks the gateway nothing on a re-run, even into a new collection (the cache is keyed by document, chunk, model and prompt)', async () => {
    await run(await openStore('docs', await llmContexts()), await llmContexts());
    const asked = gateway.requests.length;
    expect(asked).toBeGreaterThan(3);
    const rerun = await run(await openStore('docs', await llmContexts()), await llmContexts());
    const rebuilt = await openStore('docs-v3', await llmContexts());
    const fresh = await run(rebuilt, await llmContexts());
    expect(gateway.requests.length).toBe(asked);
    expect(rerun.contexts.written + fresh.contexts.written).toBe(0);
    expect(fresh.contexts.cached).toBe(fresh.chunks);
    expect(await search(rebuilt, CONTEXT_WORD)).toHaveLength(fresh.chunks);
  });

  it('indexes a chunk whose context failed without it, counts it as an error, and retries only it next run', async () => {
    failChunksWith = 'Refunds take five';
    const store = await openStore('docs', await llmContexts());
    const first = await run(store, await llmContexts());
    expect(first.errors).toBe(1);
    expect(first.contexts.failed).toBe(1);
    expect(first.toLine()).toMatch(/, 1 errors$/);
    const refunds = (await search(store, 'refunds')).find((hit) => hit.text.includes('Refunds take five'));
    expect(refunds).toBeDefined();
    expect((await search(store, CONTEXT_WORD)).map((hit) => hit.id)).not.toContain(refunds!.id);

    failChunksWith = undefined;
    const asked = gateway.requests.length;
    const second = await run(store, await llmContexts());
    expect(second.errors).toBe(0);
    expect(gateway.requests.length - asked).toBe(1);
    expect(second.contexts).toMatchObject({ written: 1, failed: 0 });
    expect((await search(store, CONTEXT_WORD)).map((hit) => hit.id)).toContain(refunds!.id);

    const third = await run(store, await llmContexts());
    expect(third.unchanged).toBe(2);
    expect(gateway.requests.length - asked).toBe(1);
  });
});

describe('the collection records its context mode', () => {
  it('refuses a writer with another mode or prompt version, and takes a mode only while empty', async () => {
    const lead = new LeadContexts();
    const store = await openStore('docs', undefined);
    await run(store, undefined);
    await store.close();
    await expect(openStore('docs', lead)).rejects.toMatchObject({ code: 'RAG_CONTEXT_MISMATCH' });
    await expect(openStore('docs', await llmContexts())).rejects.toMatchObject({ code: 'RAG_CONTEXT_MISMATCH', message: expect.stringContaining('CONTEXT_MODE=off') });

    // As the service makes it: a reader records no mode, and the first writer's is taken while it is empty.
    const empty = new LanceDbStore({ dataDir, collection: 'fresh' });
    await empty.open(null);
    await empty.close();
    const leadStore = await openStore('fresh', lead);
    await run(leadStore, lead);
    await leadStore.close();
    await expect(openStore('fresh', undefined)).rejects.toMatchObject({ code: 'RAG_CONTEXT_MISMATCH' });
    await expect(openStore('fresh', { lock: { mode: 'lead', promptVersion: 'lead-0' } } as ChunkContexts)).rejects.toMatchObject({ code: 'RAG_CONTEXT_MISMATCH' });
    // A reader (the service) gives no context and is never refused.
    const reader = new LanceDbStore({ dataDir, collection: 'fresh' });
    stores.push(reader);
    await reader.open(null);
    expect(await reader.count()).toBeGreaterThan(0);
  });
});
