/**
 * Custom metadata keys at ingest (issue 32, Low): any GCS uploader chooses an object's custom metadata keys, and each
 * key became a Qdrant payload index `meta.<key>` (PUT /collections/{c}/index,
 * https://api.qdrant.tech/api-reference/indexes/create-field-index), where a dot or a bracket is read as a nested path
 * (https://qdrant.tech/documentation/concepts/payload/#nested-key): a key is kept when the search filter could name
 * it, at most 32 a document, and the others are reported, never failing the run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, ingest, QdrantStore } from '../../src/index.ts';
import { ConverterRegistry, GcsSource, MarkdownPassthrough } from '../../src/ingestion.ts';
import { customFieldsOf } from '../../src/search-filter/custom-metadata-keys.ts';
import { FakeGcsServer } from '../ingest/fake-gcs-server.ts';
import { closeFakeServers, startFakeServer } from '../adapters/fake-server.ts';
import { FakeQdrant } from '../../../../services/retrieval/test/fakes/fake-qdrant.ts';

const gcs = new FakeGcsServer('team-docs', 10);
const qdrant = new FakeQdrant();
let qdrantUrl: string;

beforeAll(async () => {
  await gcs.start();
  qdrantUrl = (await startFakeServer(qdrant.handle)).url;
});

afterAll(async () => {
  await gcs.close();
  await closeFakeServers();
});

const MANY = Object.fromEntries(Array.from({ length: 40 }, (_, n) => [`k${String(n).padStart(2, '0')}`, 'v']));

describe('custom metadata keys', () => {
  it('keeps plain names, at most 32 a document in key order, and lists the rest', () => {
    expect(customFieldsOf({ team: 'platform', 'team.lead': 'ana', 'a[0]': 'x', ' spaced': 'y', 'ключ': 'z', ['x'.repeat(101)]: 'long', 'cost-centre_2': '42' })).toEqual({
      meta: { team: 'platform', 'cost-centre_2': '42' },
      ignoredKeys: [' spaced', 'a[0]', 'team.lead', 'x'.repeat(101), 'ключ'],
    });
    const capped = customFieldsOf(MANY);
    expect(Object.keys(capped.meta)).toEqual(Object.keys(MANY).slice(0, 32));
    expect(capped.ignoredKeys).toEqual(Object.keys(MANY).slice(32));
  });

  it('indexes only valid keys from a bucket, reports the others, and the run writes every document without an error', async () => {
    gcs.put('handbook/guide.md', '# Guide\n\nHow to roll back a deployment.\n', { team: 'platform', 'team.lead': 'ana', 'a[0]': 'x' });
    gcs.put('handbook/many.md', '# Many\n\nA document with many fields.\n', MANY);
    const store = new QdrantStore({ url: qdrantUrl, collection: 'docs' });
    await store.open(null);
    try {
      const summary = await ingest({
        source: new GcsSource({ bucket: 'team-docs', prefix: 'handbook/', apiEndpoint: gcs.baseUrl }),
        store,
        converters: new ConverterRegistry([new MarkdownPassthrough()]),
        chunking: { chunkSize: 1200, chunkOverlap: 200 },
        embedBatchSize: 8,
        concurrency: 2,
        prune: true,
        dryRun: false,
        logger: createLogger('silent'),
      });
      expect(summary.failures).toEqual([]);
      expect(summary.upserts).toBe(2);
      const indexes = [...qdrant.collections.get('docs')!.payloadIndexes.keys()].filter((field) => field.startsWith('meta.')).sort();
      expect(indexes).toEqual(['meta.team', ...Object.keys(MANY).slice(0, 32).map((key) => `meta.${key}`)].sort());
      expect(summary.ignoredMetaKeys).toEqual([
        { uri: 'gs://team-docs/handbook/guide.md', keys: ['a[0]', 'team.lead'] },
        { uri: 'gs://team-docs/handbook/many.md', keys: Object.keys(MANY).slice(32) },
      ]);
      expect(summary.ignoredMetaKeysLine()).toBe('metadata: 10 custom keys ignored on 2 documents ("a[0]", "team.lead", "k32", "k33", "k34", …): a key is letters, digits, _ and -, at most 100, and 32 keys a document');
    } finally {
      await store.close();
    }
  });
});
