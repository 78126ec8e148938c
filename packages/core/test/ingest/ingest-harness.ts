import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, ingest, type Chunk, type EmbeddingModelLock, type Embedder, type HybridQuery, type IndexedChunk, type IndexedDocument, type IngestOptions, type IngestSummary, type SearchHit, type VectorStore } from '../../src/index.ts';
import { afterEach, beforeEach } from 'vitest';
import { createConverters, LocalDirectorySource, type DocumentSource } from '../../src/ingestion.ts';
import { guide } from './fixture-folder.ts';
import { LanceDbStore } from '../../src/embedded.ts';

/** A deterministic embedder that counts its calls: the cost a re-run must not pay. */
export class CountingEmbedder implements Embedder {
  readonly modelId = 'counting-test-embedder';
  calls = 0;
  texts = 0;

  async describe(): Promise<EmbeddingModelLock> {
    return { model: this.modelId, dimension: 4 };
  }

  async embedDocuments(texts: string[]): Promise<number[][]> {
    this.calls += 1;
    this.texts += texts.length;
    return texts.map(vectorOf);
  }

  async embedQuery(text: string): Promise<number[]> {
    return vectorOf(text);
  }
}

function vectorOf(text: string): number[] {
  const codes = [...text].map((character) => character.charCodeAt(0));
  return [text.length, codes.reduce((sum, code) => sum + code, 0) % 97, codes.length % 7, 1];
}

/** A real LanceDB store that counts writes and can fail on demand, as a crash or an outage would. */
export class CountingStore implements VectorStore {
  readonly name = 'counting-lancedb';
  upsertCalls = 0;
  upsertedPoints = 0;
  deletedPoints = 0;
  /** setGroups calls: documents whose groups alone were rewritten. */
  groupUpdates: Array<{ source: string; groups: string[] }> = [];
  /** Upsert calls that succeed before every later one throws. */
  failUpsertsAfter = Number.POSITIVE_INFINITY;
  /** deleteByIds calls that succeed before every later one throws. */
  failDeletesAfter = Number.POSITIVE_INFINITY;
  private deleteCalls = 0;

  constructor(readonly inner: LanceDbStore) {}

  resetCounts(): void {
    this.upsertCalls = 0;
    this.upsertedPoints = 0;
    this.deletedPoints = 0;
    this.deleteCalls = 0;
    this.groupUpdates = [];
  }

  open(lock: EmbeddingModelLock | null): Promise<void> {
    return this.inner.open(lock);
  }

  async upsert(chunks: IndexedChunk[]): Promise<void> {
    if (this.upsertCalls >= this.failUpsertsAfter) throw new Error('store went away (simulated crash)');
    this.upsertCalls += 1;
    this.upsertedPoints += chunks.length;
    await this.inner.upsert(chunks);
  }

  async deleteByIds(ids: string[]): Promise<void> {
    if (ids.length > 0 && this.deleteCalls >= this.failDeletesAfter) throw new Error('store went away (simulated crash)');
    if (ids.length > 0) this.deleteCalls += 1;
    this.deletedPoints += ids.length;
    await this.inner.deleteByIds(ids);
  }

  deleteBySource(source: string): Promise<void> {
    return this.inner.deleteBySource(source);
  }

  async setGroups(source: string, groups: readonly string[]): Promise<void> {
    this.groupUpdates.push({ source, groups: [...groups] });
    await this.inner.setGroups(source, groups);
  }

  listDocuments(): Promise<IndexedDocument[]> {
    return this.inner.listDocuments();
  }

  search(query: HybridQuery): Promise<SearchHit[]> {
    return this.inner.search(query);
  }

  getChunks(ids: readonly string[], visibleGroups: readonly string[]): Promise<Chunk[]> {
    return this.inner.getChunks(ids, visibleGroups);
  }

  count(): Promise<number> {
    return this.inner.count();
  }

  checkReady(): Promise<void> {
    return this.inner.checkReady();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

export interface Harness {
  store: CountingStore;
  embedder: CountingEmbedder;
  dataDir: string;
  run(source: DocumentSource, options?: Partial<IngestOptions>): Promise<IngestSummary>;
  /** source → content hash and sorted chunk ids: what a search can reach. */
  snapshot(): Promise<Map<string, { contentHash: string; chunkIds: string[] }>>;
  close(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  const dataDir = await mkdtemp(join(tmpdir(), 'rag-ingest-test-'));
  const embedder = new CountingEmbedder();
  const store = new CountingStore(new LanceDbStore({ dataDir, collection: 'test' }));
  await store.open(await embedder.describe());
  return {
    store,
    embedder,
    dataDir,
    run(source, options = {}) {
      embedder.calls = 0;
      embedder.texts = 0;
      store.resetCounts();
      return ingest({
        source,
        store,
        embedder,
        converters: createConverters({ DOCLING_URL: undefined, DOCLING_API_KEY: undefined, DOCLING_TIMEOUT_MS: 600_000 }),
        chunking: { chunkSize: 300, chunkOverlap: 50 },
        embedBatchSize: 4,
        concurrency: 3,
        // One document a batch, so that a store failing after N writes fails whole documents.
        writeBatchPoints: 1,
        prune: true,
        dryRun: false,
        logger: createLogger('silent'),
        ...options,
      });
    },
    async snapshot() {
      const documents = (await store.listDocuments()).sort((a, b) => a.source.localeCompare(b.source));
      return new Map(documents.map((document) => [document.source, { contentHash: document.contentHash, chunkIds: [...document.chunkIds].sort() }]));
    },
    async close() {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface IndexedGuides {
  /** The folder of guides, indexed once before each test. */
  folder: string;
  harness: Harness;
  /** Another sync of the folder through the same harness. */
  run(options?: Parameters<Harness['run']>[1]): ReturnType<Harness['run']>;
}

/**
 * Registers beforeEach/afterEach hooks that write a folder of guides (guide(2, name) each), index it
 * with a fresh harness, and remove both after the test; the returned object holds the current ones.
 */
export function useIndexedGuides(names: readonly string[], folderPrefix: string): IndexedGuides {
  const fixture = {
    folder: '',
    harness: undefined as unknown as Harness,
    run: (options: Parameters<Harness['run']>[1] = {}) => fixture.harness.run(new LocalDirectorySource(fixture.folder), options),
  };
  beforeEach(async () => {
    fixture.folder = await mkdtemp(join(tmpdir(), folderPrefix));
    for (const name of names) await writeFile(join(fixture.folder, name), guide(2, name));
    fixture.harness = await startHarness();
    await fixture.harness.run(new LocalDirectorySource(fixture.folder));
  });
  afterEach(async () => {
    await fixture.harness.close();
    await rm(fixture.folder, { recursive: true, force: true });
  });
  return fixture;
}
