/**
 * QdrantStore's context lock (CONTEXT_MODE) in the collection metadata, against a local server answering
 * as Qdrant 1.17 documents GET/PATCH /collections/{c} and POST /points/count.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { QdrantStore } from '../../src/stores/qdrant.ts';
import { closeFakeServers, sendJson, startFakeServer, type RecordedRequest } from './fake-server.ts';
import { failure } from './rag-failure.ts';

const C = 'docs-v2';
const LEAD = { mode: 'lead', promptVersion: 'lead-1' } as const;

afterEach(closeFakeServers);

function ok(response: ServerResponse, result: unknown): void {
  sendJson(response, 200, { result, status: 'ok', time: 0.000_1 });
}

function info(metadata: Record<string, unknown>) {
  return { status: 'green', points_count: 0, config: { params: { sparse_vectors: { bm25: { modifier: 'idf' } } }, metadata }, payload_schema: { source: {}, groups: {} } };
}

async function qdrant(metadata: Record<string, unknown>, points: number) {
  return startFakeServer((request: RecordedRequest, response) => {
    const route = `${request.method} ${request.path}`;
    if (route === `GET /collections/${C}`) return ok(response, info(metadata));
    if (route === `POST /collections/${C}/points/count`) return ok(response, { count: points });
    if (route === `PATCH /collections/${C}`) return ok(response, true);
    sendJson(response, 404, { status: { error: `unexpected ${route}` } });
  });
}

describe('QdrantStore context lock', () => {
  it('refuses a writer whose context mode or version differs from the recorded one', async () => {
    const server = await qdrant({ embedding_model: null, context_mode: 'lead', context_prompt_version: 'lead-1' }, 10);
    const error = await failure(new QdrantStore({ url: server.url, collection: C }).open(null, { context: { mode: 'llm', promptVersion: 'llm-1' } }));
    expect(error.code).toBe('RAG_CONTEXT_MISMATCH');
    expect(error.message).toContain('CONTEXT_MODE=lead (lead-1)');
    await new QdrantStore({ url: server.url, collection: C }).open(null, { context: LEAD });
    await new QdrantStore({ url: server.url, collection: C }).open(null);
  });

  it('records the writer\'s mode on an empty collection without one, and takes a filled one for off', async () => {
    const empty = await qdrant({ embedding_model: null }, 0);
    await new QdrantStore({ url: empty.url, collection: C }).open(null, { context: LEAD });
    expect(empty.requests.find((request) => request.method === 'PATCH')?.body).toEqual({ metadata: { context_mode: 'lead', context_prompt_version: 'lead-1' } });

    const filled = await qdrant({ embedding_model: null }, 5);
    const error = await failure(new QdrantStore({ url: filled.url, collection: C }).open(null, { context: LEAD }));
    expect(error.code).toBe('RAG_CONTEXT_MISMATCH');
    expect(error.message).toContain('CONTEXT_MODE=off');
  });
});
