/**
 * Document metadata through the real ingest pipeline: a folder's files get their type, size, modified time and
 * the custom fields of .rag-metadata.yaml (never indexed itself) and their title on every chunk; a change of
 * metadata alone is applied in place (no chunking, no upsert of chunks) and keeps the title; an unreadable metadata
 * file stops the run.
 */
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger, encodeQuery, ingest, toSearchFilter } from '../../src/index.ts';
import { ConverterRegistry, LocalDirectorySource, MarkdownPassthrough } from '../../src/ingestion.ts';
import type { IndexedChunk } from '../../src/domain.ts';
import type { DocumentMetadata } from '../../src/search-filter/document-metadata.ts';
import { LanceDbStore } from '../../src/stores/lancedb.ts';

/** The embedded store, counting what the ingest writes. */
class CountingLanceDb extends LanceDbStore {
  upserted = 0;
  metadataUpdates: string[] = [];
  override async upsert(chunks: IndexedChunk[]): Promise<void> {
    this.upserted += chunks.length;
    await super.upsert(chunks);
  }
  override async setMetadata(source: string, metadata: DocumentMetadata): Promise<void> {
    this.metadataUpdates.push(source);
    await super.setMetadata(source, metadata);
  }
}

let folder: string;
let dataDir: string;
let store: CountingLanceDb;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rag-metadata-corpus-'));
  dataDir = await mkdtemp(join(tmpdir(), 'rag-metadata-store-'));
  await mkdir(join(folder, 'ops'));
  await writeFile(join(folder, 'ops', 'deploy.md'), '# Deploy\n\nHow to deploy the credential service.\n');
  await writeFile(join(folder, 'welcome.md'), '# Welcome\n\nWhere to find the credential for the wiki.\n');
  await writeFile(join(folder, '.rag-metadata.yaml'), 'rules:\n  - path: "ops/**"\n    fields: {team: platform}\n');
  store = new CountingLanceDb({ dataDir, collection: 'docs' });
  await store.open(null);
});

afterEach(async () => {
  await store.close();
  await rm(folder, { recursive: true, force: true });
  await rm(dataDir, { recursive: true, force: true });
});

function run() {
  return ingest({
    source: new LocalDirectorySource(folder),
    store,
    converters: new ConverterRegistry([new MarkdownPassthrough()]),
    chunking: { chunkSize: 1200, chunkOverlap: 200 },
    embedBatchSize: 8,
    concurrency: 2,
    prune: true,
    dryRun: false,
    logger: createLogger('silent'),
  });
}

async function sourcesFor(filter: Parameters<typeof toSearchFilter>[0]): Promise<string[]> {
  const hits = await store.search({ sparse: encodeQuery('credential'), limit: 20, prefetchLimit: 20, visibleGroups: [], filter: toSearchFilter(filter) });
  return [...new Set(hits.map((hit) => hit.source))].sort();
}

describe('document metadata from a folder', () => {
  it('stores type, size, modified time and custom fields with every chunk, never indexing the metadata file', async () => {
    const summary = await run();
    expect(summary.files).toBe(2);
    const documents = Object.fromEntries((await store.listDocuments()).map((document) => [document.source, document.metadata]));
    const info = await stat(join(folder, 'ops', 'deploy.md'));
    expect(documents['ops/deploy.md']).toEqual({ type: 'md', size: info.size, modifiedAt: Math.floor(info.mtimeMs / 1000), meta: { team: 'platform' }, title: 'Deploy' });
    expect(documents['welcome.md']?.meta).toEqual({});
    expect(await sourcesFor({ meta: { team: 'platform' } })).toEqual(['ops/deploy.md']);
    expect(await sourcesFor({ title: 'WEL*' })).toEqual(['welcome.md']);
  });

  it('applies a change of metadata alone in place: nothing chunked or upserted', async () => {
    await run();
    store.upserted = 0;
    await writeFile(join(folder, '.rag-metadata.yaml'), 'rules:\n  - path: "**/*.md"\n    fields: {team: docs}\n');

    const summary = await run();

    expect(summary.chunks).toBe(0);
    expect(store.upserted).toBe(0);
    expect(store.metadataUpdates.sort()).toEqual(['ops/deploy.md', 'welcome.md']);
    expect(await sourcesFor({ meta: { team: 'docs' } })).toEqual(['ops/deploy.md', 'welcome.md']);
    expect(await sourcesFor({ meta: { team: 'platform' } })).toEqual([]);
    // The title, read from the content when it was indexed, stays: the listing does not know it.
    expect((await store.listDocuments()).map((document) => document.metadata?.title).sort()).toEqual(['Deploy', 'Welcome']);
    expect(await sourcesFor({ title: 'deploy' })).toEqual(['ops/deploy.md']);

    store.metadataUpdates = [];
    const again = await run();
    expect(store.metadataUpdates).toEqual([]);
    expect(again.unchanged).toBe(2);
  });

  it('stops the run on a metadata file that cannot be parsed (RAG_METADATA_FILE_INVALID)', async () => {
    await writeFile(join(folder, '.rag-metadata.yaml'), 'rules:\n  - path: "ops/**"\n    feilds: {team: x}\n');
    await expect(run()).rejects.toMatchObject({ code: 'RAG_METADATA_FILE_INVALID', message: expect.stringContaining('rules.0') });
  });
});
