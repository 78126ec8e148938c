/**
 * The API reads Qdrant with the read-only key (`service.read_only_api_key`, QDRANT__SERVICE__READ_ONLY_API_KEY);
 * the ingest and backup jobs write with the full one. A leaked API pod can then read the collection but
 * neither change nor delete it.
 *
 * What the read-only key may do, from Qdrant's source for the version k8s/rag/qdrant/qdrant.yaml deploys
 * (qdrant/qdrant:v1.17.0; Cargo.toml `version = "1.17.0"` at commit 00bb9b74d5b91ab218bdd9eb5d4305a0e94af637).
 * The source index held these files only at neighbouring commits, not at that one: src/common/auth/mod.rs at
 * 004845e96d7f24eede3171f6d3f49172f72d5db6 and an ops_checks.rs that knows CollectionQueryRequest and
 * FacetParams (the Query API, 1.10+, and facets, 1.12+); the access model below has been the same since 1.9.
 * - src/common/auth/mod.rs, `AuthKeys::validate_request`: the read-only key gets `Access::full_ro` =
 *   `Access::Global(GlobalAccessMode::Read)`; every request passes the middleware and each operation is
 *   checked against it (the older path list READ_ONLY_POST_PATTERNS in src/actix/auth.rs, which knew
 *   neither /points/query nor /facet, is gone since the RBAC rewrite, 1.9).
 * - lib/storage/src/rbac/mod.rs, `GlobalAccessMode::meets_requirements`: Read refuses only operations
 *   requiring `write` or `manage` ("Global manage access is required", HTTP 403).
 * - lib/storage/src/rbac/ops_checks.rs: `CollectionQueryRequest` (POST …/points/query), `ScrollRequestInternal`
 *   (…/points/scroll), `CountRequestInternal` (…/points/count), `FacetParams` (…/facet), `PointRequestInternal`
 *   (POST …/points) require neither; `CreateCollection`, `UpdateCollection`, `ChangeAliases` require `manage`,
 *   `CreatePayloadIndex` requires `write`, every point and payload update `write`.
 * - lib/storage/src/content_manager/toc (collection info, `list_aliases`): `check_collection_access` with
 *   `AccessRequirements::new()`: reads.
 * The fake gate below applies exactly that table over REST, in front of the fake Qdrant.
 */
import type { ServerResponse } from 'node:http';
import { createLogger, type Config, PassageReader, QdrantStore, Retriever, TeiEmbedder, Telemetry } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeFakeServers, type RecordedRequest, startFakeServer } from '../../packages/core/test/adapters/fake-server.ts';
import { withPinnedCollection } from '../../services/retrieval/src/pinned-collection.ts';
import { StoreGate } from '../../services/retrieval/src/store-gate.ts';
import { FakeQdrant, qdrantError } from '../../services/retrieval/test/fakes/fake-qdrant.ts';
import { FakeQdrantAliases } from '../../services/retrieval/test/fakes/fake-qdrant-aliases.ts';
import { teiEmbed } from '../../services/retrieval/test/fakes/fake-tei.ts';
import { handbookFolder, ingestFolder } from '../../services/retrieval/test/test-stack.ts';
import { baseDir, type Manifest, podSpecOf, readKustomization, workloads } from './render.ts';

const FULL_KEY = 'full-key-0123456789';
const READ_ONLY_KEY = 'read-only-key-0123456789';

/** REST operations Qdrant 1.17 lets a read-only key run (see the header): every GET, and these POSTs. */
const READ_ONLY_POSTS = [
  /^\/collections\/[^/]+\/points$/, // retrieve by ids
  /^\/collections\/[^/]+\/points\/(query|scroll|count|search|recommend|discover)(\/batch|\/groups)?$/,
  /^\/collections\/[^/]+\/points\/search\/matrix\/(pairs|offsets)$/,
  /^\/collections\/[^/]+\/facet$/,
];

function readOnlyMayRun(method: string, pathname: string): boolean {
  return method === 'GET' || (method === 'POST' && READ_ONLY_POSTS.some((pattern) => pattern.test(pathname)));
}

interface Decision {
  key: 'full' | 'read-only';
  call: string;
  allowed: boolean;
}

/** Qdrant's API-key check in front of the fake: 401 without a known key, 403 for a write with the read-only one. */
function keyGate(inner: (request: RecordedRequest, response: ServerResponse) => void, decisions: Decision[]) {
  return (request: RecordedRequest, response: ServerResponse): void => {
    const key = request.headers['api-key'];
    const { pathname } = new URL(request.path, 'http://qdrant');
    const call = `${request.method} ${pathname.replace(/^\/collections\/(?!aliases$)[^/]+/, '/collections/{c}')}`;
    if (key === FULL_KEY) {
      decisions.push({ key: 'full', call, allowed: true });
      return inner(request, response);
    }
    if (key !== READ_ONLY_KEY) return qdrantError(response, 401, 'Unauthorized: Must provide an API key or an Authorization bearer token');
    const allowed = readOnlyMayRun(request.method, pathname);
    decisions.push({ key: 'read-only', call, allowed });
    if (!allowed) return qdrantError(response, 403, 'Forbidden: Global manage access is required');
    inner(request, response);
  };
}

const logger = createLogger('silent');
const telemetry = new Telemetry();
const qdrant = new FakeQdrant();
const aliases = new FakeQdrantAliases(qdrant.handle, (name) => qdrant.collections.has(name));
const decisions: Decision[] = [];
let qdrantUrl: string;
let teiUrl: string;

beforeAll(async () => {
  qdrantUrl = (await startFakeServer(keyGate(aliases.handle, decisions))).url;
  teiUrl = (await startFakeServer(teiEmbed)).url;
  // The ingest job, with the full key: creates the collection and its indexes, writes the points.
  const writer = new QdrantStore({ url: qdrantUrl, apiKey: FULL_KEY, collection: 'docs-v2' });
  const embedder = new TeiEmbedder({ url: teiUrl, model: 'fake/model-a' });
  await new StoreGate(writer, embedder).ready();
  await ingestFolder(handbookFolder, writer, embedder, logger);
});

afterAll(async () => {
  await telemetry.shutdown();
  await closeFakeServers();
});

describe('the read-only Qdrant key', () => {
  it('is the one the API reads; the ingest and backup jobs write with the full key; Qdrant knows both', () => {
    const objects = workloads(readKustomization(baseDir).objects);
    const qdrantKey = (name: string, variable: string) => {
      const container = podSpecOf(objects.find((workload: Manifest) => workload.metadata.name === name)).containers[0];
      return container.env.find((entry: Manifest) => entry.name === variable)?.valueFrom?.secretKeyRef;
    };
    expect(qdrantKey('retrieval', 'QDRANT_API_KEY')).toMatchObject({ name: 'qdrant-key', key: 'read-only-api-key' });
    expect(qdrantKey('ingest', 'QDRANT_API_KEY')).toMatchObject({ name: 'qdrant-key', key: 'api-key' });
    expect(qdrantKey('qdrant-backup', 'QDRANT_API_KEY')).toMatchObject({ name: 'qdrant-key', key: 'api-key' });
    expect(qdrantKey('qdrant', 'QDRANT__SERVICE__API_KEY')).toMatchObject({ name: 'qdrant-key', key: 'api-key' });
    expect(qdrantKey('qdrant', 'QDRANT__SERVICE__READ_ONLY_API_KEY')).toMatchObject({ name: 'qdrant-key', key: 'read-only-api-key' });
  });

  it('runs every call the API makes: alias lookup, open, readiness, hybrid query, source facet, passages, sources, count', async () => {
    const start = decisions.length;
    const config = await withPinnedCollection({ QDRANT_URL: qdrantUrl, QDRANT_API_KEY: READ_ONLY_KEY, collection: 'docs-v2' } as Config, logger);
    const store = new QdrantStore({ url: qdrantUrl, apiKey: READ_ONLY_KEY, collection: config.collection });
    const embedder = new TeiEmbedder({ url: teiUrl, model: 'fake/model-a' });
    await new StoreGate(store, embedder).ready();
    await store.checkReady();
    const retriever = new Retriever({ store, embedder, rerankCandidates: 0, telemetry });
    const hits = await retriever.search('how do I request leave?', 3, [], undefined, { filter: { source: '**/*.md' } });
    const passages = new PassageReader(store);
    const sources = await passages.listSources([]);
    const chunks = await store.getChunks([hits[0]!.id], []);
    const count = await store.count();

    expect(hits.length).toBeGreaterThan(0);
    expect(sources.length).toBeGreaterThan(0);
    expect(chunks).toHaveLength(1);
    expect(count).toBeGreaterThan(0);
    const made = decisions.slice(start);
    expect(made.filter((decision) => !decision.allowed).map((decision) => decision.call)).toEqual([]);
    expect(new Set(made.map((decision) => decision.call))).toEqual(
      new Set(['GET /aliases', 'GET /collections/{c}', 'POST /collections/{c}/points/query', 'POST /collections/{c}/facet', 'POST /collections/{c}/points/scroll', 'POST /collections/{c}/points/count']),
    );
  });

  it('cannot create a missing collection: the API stays unready until the first ingest creates it', async () => {
    const store = new QdrantStore({ url: qdrantUrl, apiKey: READ_ONLY_KEY, collection: 'not-ingested-yet', retries: 0 });
    const embedder = new TeiEmbedder({ url: teiUrl, model: 'fake/model-a' });
    await expect(new StoreGate(store, embedder).ready()).rejects.toThrow(/403|manage access/);
    await expect(store.checkReady()).rejects.toMatchObject({ code: 'RAG_STORE_NOT_READY' });
    expect(qdrant.collections.has('not-ingested-yet')).toBe(false);
  });
});
