/**
 * BM25_LANGUAGE is recorded with the collection, like the embedding model, and checked by readers and writers in
 * both stores: the embedded store's model record (<collection>.model.json) and a Qdrant collection's `metadata`
 * (Qdrant ≥ 1.16, https://qdrant.tech/documentation/concepts/collections/#collection-metadata), against a local
 * server answering GET/PUT /collections/{c} as Qdrant 1.17 documents them. A French collection is then searched
 * in French end to end (ingest → store → Retriever).
 */
import type { ServerResponse } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createLogger, ingest, PUBLIC_ONLY, Retriever, Telemetry } from '../../src/index.ts';
import { createConverters, LocalDirectorySource } from '../../src/ingestion.ts';
import { LanceDbStore } from '../../src/stores/lancedb.ts';
import { QdrantStore } from '../../src/stores/qdrant.ts';
import { closeFakeServers, sendJson, startFakeServer, type RecordedRequest } from '../adapters/fake-server.ts';
import { failure } from '../adapters/rag-failure.ts';

const C = 'docs-fr';
const folders: string[] = [];

afterEach(async () => {
  await closeFakeServers();
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function temporaryFolder(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'rag-bm25-language-'));
  folders.push(folder);
  return folder;
}

function ok(response: ServerResponse, result: unknown): void {
  sendJson(response, 200, { result, status: 'ok', time: 0.000_1 });
}

/** A Qdrant holding collection C with this metadata, or none (then it accepts its creation). */
async function qdrant(metadata: Record<string, unknown> | undefined) {
  return startFakeServer((request: RecordedRequest, response) => {
    const route = `${request.method} ${request.path}`;
    const path = route.split('?')[0];
    if (path === `GET /collections/${C}` && metadata) {
      return ok(response, { status: 'green', points_count: 3, config: { params: { sparse_vectors: { bm25: { modifier: 'idf' } } }, metadata }, payload_schema: { source: {}, groups: {} } });
    }
    if (path === `GET /collections/${C}`) return sendJson(response, 404, { status: { error: `Not found: Collection \`${C}\` doesn't exist!` }, time: 0 });
    if (path === `PUT /collections/${C}` || path === `PUT /collections/${C}/index`) return ok(response, true);
    sendJson(response, 404, { status: { error: `unexpected ${route}` } });
  });
}

describe('BM25_LANGUAGE is locked to the collection', () => {
  it('is read from the environment, english by default, and only a supported language is accepted', () => {
    expect(loadConfig({}).BM25_LANGUAGE).toBe('english');
    expect(loadConfig({ BM25_LANGUAGE: 'french' }).BM25_LANGUAGE).toBe('french');
    expect(() => loadConfig({ BM25_LANGUAGE: 'klingon' })).toThrow(/BM25_LANGUAGE/);
  });

  it('Qdrant: a new collection records its language; another language is refused, to readers too', async () => {
    const empty = await qdrant(undefined);
    await new QdrantStore({ url: empty.url, collection: C, bm25Language: 'french' }).open(null);
    const created = empty.requests.find((request) => request.method === 'PUT' && request.path === `/collections/${C}`);
    expect((created?.body as { metadata: Record<string, unknown> }).metadata.bm25_language).toBe('french');

    const french = await qdrant({ embedding_model: null, bm25_language: 'french' });
    await new QdrantStore({ url: french.url, collection: C, bm25Language: 'french' }).open(null);
    const reader = await failure(new QdrantStore({ url: french.url, collection: C }).open(null, { create: false }));
    expect(reader.code).toBe('RAG_LANGUAGE_MISMATCH');
    expect(reader.message).toContain('BM25_LANGUAGE=french; configured: english');
  });

  it('Qdrant: a collection that records no language counts as english', async () => {
    const legacy = await qdrant({ embedding_model: null });
    await new QdrantStore({ url: legacy.url, collection: C }).open(null);
    expect((await failure(new QdrantStore({ url: legacy.url, collection: C, bm25Language: 'cjk' }).open(null))).code).toBe('RAG_LANGUAGE_MISMATCH');
  });

  it('embedded store: the language is in the model record; other readers and writers are refused; no record means english', async () => {
    const dataDir = await temporaryFolder();
    const writer = new LanceDbStore({ dataDir, collection: C, bm25Language: 'french' });
    await writer.open(null);
    await writer.close();
    const recordFile = join(dataDir, 'lancedb', `${C}.model.json`);
    expect(JSON.parse(await readFile(recordFile, 'utf8')).bm25Language).toBe('french');

    for (const create of [true, false]) {
      const error = await failure(new LanceDbStore({ dataDir, collection: C, bm25Language: 'german' }).open(null, { create }));
      expect(error.code).toBe('RAG_LANGUAGE_MISMATCH');
      expect(error.message).toContain('BM25_LANGUAGE=french; configured: german');
    }

    const { bm25Language: _dropped, ...legacy } = JSON.parse(await readFile(recordFile, 'utf8')) as Record<string, unknown>;
    await writeFile(recordFile, JSON.stringify(legacy));
    expect((await failure(new LanceDbStore({ dataDir, collection: C, bm25Language: 'french' }).open(null))).code).toBe('RAG_LANGUAGE_MISMATCH');
    const english = new LanceDbStore({ dataDir, collection: C });
    await english.open(null);
    await english.close();
  });

  it('a French collection is written and searched in French: a plural and verb forms find the passage', async () => {
    const [dataDir, corpus] = [await temporaryFolder(), await temporaryFolder()];
    await writeFile(join(corpus, 'guide.md'), '# Déploiement\n\nLes journaux sont sauvegardés automatiquement après chaque déploiement.\n');
    await writeFile(join(corpus, 'autre.md'), '# Sauvegardes\n\nUne sauvegarde quotidienne est conservée trente jours.\n');
    const search = async (language: 'french' | 'english', questions: string[]) => {
      const store = new LanceDbStore({ dataDir: join(dataDir, language), collection: C, bm25Language: language });
      await store.open(null);
      const converters = createConverters({ DOCLING_URL: undefined, DOCLING_API_KEY: undefined, DOCLING_TIMEOUT_MS: 600_000 });
      await ingest({ source: new LocalDirectorySource(corpus), store, embedder: undefined, converters, chunking: { chunkSize: 300, chunkOverlap: 50 }, embedBatchSize: 4, concurrency: 1, prune: true, dryRun: false, logger: createLogger('silent') });
      const retriever = new Retriever({ store, rerankCandidates: 10, telemetry: new Telemetry() });
      const tops: Array<string | undefined> = [];
      for (const question of questions) tops.push((await retriever.search(question, 1, PUBLIC_ONLY))[0]?.text);
      await store.close();
      return tops;
    };
    // Each question misses the passage if either side (ingest, query) is encoded in English.
    const questions = ['Faut-il sauvegarder le journal quand on va déployer ?', 'Quels journaux garde-t-on pendant les déploiements ?'];
    for (const top of await search('french', questions)) expect(top).toContain('Les journaux sont sauvegardés');
    // The English analyzer meets none of the passage's forms in the first question (journal ≠ journaux,
    // sauvegard ≠ sauvegardé, déployer ≠ déploiement) and ranks the other file, whose "sauvegarde" it meets, first.
    expect((await search('english', questions.slice(0, 1)))[0]).toContain('Une sauvegarde quotidienne');
  });
});
