/**
 * A model change without downtime: the API and the job use QDRANT_COLLECTION=docs, an alias; a new model
 * fills docs-v3 while docs-v2 serves; k8s/scripts/flip-alias.ts moves the alias in one call (Qdrant's
 * `POST /collections/aliases`, https://api.qdrant.tech/v-1-17-x/api-reference/aliases/update-aliases).
 * Each API process pins the collection the alias named at its start (pinned-collection.ts), so while
 * queries run across the flip none fails and none reaches the other model's collection; a process started
 * after the flip with the new model answers from docs-v3, and flipping back is the rollback.
 */
import { createLogger, QdrantAliases, QdrantStore, Retriever, TeiEmbedder, Telemetry, type Config } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flipAlias } from '../../../k8s/scripts/flip-alias.ts';
import { closeFakeServers, startFakeServer } from '../../../packages/core/test/adapters/fake-server.ts';
import { withPinnedCollection } from '../src/pinned-collection.ts';
import { StoreGate } from '../src/store-gate.ts';
import { FakeQdrant } from './fakes/fake-qdrant.ts';
import { FakeQdrantAliases } from './fakes/fake-qdrant-aliases.ts';
import { teiEmbed } from './fakes/fake-tei.ts';
import { handbookFolder, ingestFolder } from './test-stack.ts';

const logger = createLogger('silent');
const telemetry = new Telemetry();
const qdrant = new FakeQdrant();
const aliases = new FakeQdrantAliases(qdrant.handle, (name) => qdrant.collections.has(name));
let qdrantUrl: string;
let teiUrl: string;

/** One API process as server.ts wires it: QDRANT_COLLECTION resolved at start, the model's embedder. */
async function startApi(model: string): Promise<{ retriever: Retriever; collection: string }> {
  const config = { QDRANT_URL: qdrantUrl, collection: 'docs' } as Config;
  const { collection } = await withPinnedCollection(config, logger);
  const store = new QdrantStore({ url: qdrantUrl, collection });
  const embedder = new TeiEmbedder({ url: teiUrl, model });
  await new StoreGate(store, embedder).ready();
  return { retriever: new Retriever({ store, embedder, rerankCandidates: 0, telemetry }), collection };
}

async function fill(collection: string, model: string): Promise<void> {
  const store = new QdrantStore({ url: qdrantUrl, collection });
  const embedder = new TeiEmbedder({ url: teiUrl, model });
  await new StoreGate(store, embedder).ready();
  await ingestFolder(handbookFolder, store, embedder, logger);
}

beforeAll(async () => {
  qdrantUrl = (await startFakeServer(aliases.handle)).url;
  teiUrl = (await startFakeServer(teiEmbed)).url;
  await fill('docs-v2', 'fake/model-a');
  await new QdrantAliases({ url: qdrantUrl }).flip('docs', 'docs-v2');
});

afterAll(async () => {
  await telemetry.shutdown();
  await closeFakeServers();
});

describe('a model change through the collection alias', () => {
  it('flips the alias while queries run: none fails, none reaches the new model\'s collection, new processes follow the alias', async () => {
    const old = await startApi('fake/model-a');
    expect(old.collection).toBe('docs-v2');
    await fill('docs-v3', 'fake/model-b'); // the new model's ingest, into its own collection

    let flipped = false;
    const before = aliases.reached.length;
    const queries = (async () => {
      const outcomes: string[] = [];
      for (let i = 0; i < 40; i++) {
        const hits = await old.retriever.search('how do I request leave?', 3, []).then(
          (found) => (found.length > 0 ? 'ok' : 'empty'),
          (error: { code?: string }) => error.code ?? 'error',
        );
        outcomes.push(hits);
        if (i === 10) flipped = (await flipAlias(qdrantUrl, undefined, 'docs', 'docs-v3')) === 'alias docs: docs-v2 → docs-v3 (roll back: --to docs-v2)';
      }
      return outcomes;
    })();
    expect(new Set(await queries)).toEqual(new Set(['ok']));
    expect(flipped).toBe(true);
    expect(new Set(aliases.reached.slice(before)), 'the running process keeps its collection').toEqual(new Set(['docs-v2']));

    const next = await startApi('fake/model-b');
    expect(next.collection).toBe('docs-v3');
    const beforeNext = aliases.reached.length;
    expect((await next.retriever.search('how do I request leave?', 3, [])).length).toBeGreaterThan(0);
    expect(new Set(aliases.reached.slice(beforeNext))).toEqual(new Set(['docs-v3']));
  }, 60_000);

  it('refuses to start a process whose model is not the one of the collection the alias names', async () => {
    await new QdrantAliases({ url: qdrantUrl }).flip('docs', 'docs-v3');
    await expect(startApi('fake/model-a')).rejects.toMatchObject({ code: 'RAG_MODEL_MISMATCH' });
  });

  it('rolls back by flipping the alias back', async () => {
    expect(await flipAlias(qdrantUrl, undefined, 'docs', 'docs-v2')).toBe('alias docs: docs-v3 → docs-v2 (roll back: --to docs-v3)');
    const rolledBack = await startApi('fake/model-a');
    expect(rolledBack.collection).toBe('docs-v2');
    expect((await rolledBack.retriever.search('how do I request leave?', 3, [])).length).toBeGreaterThan(0);
  });
});
