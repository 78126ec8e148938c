import type { ServerResponse } from 'node:http';
import { createStore } from '../../src/adapters-from-config.ts';
import { loadConfig } from '../../src/config.ts';
import { sendJson, startFakeServer, type RecordedRequest } from './fake-server.ts';

/** A Qdrant without the collection `docs-v2` that accepts its creation and its payload indexes. */
function qdrantWithoutCollection(request: RecordedRequest, response: ServerResponse): void {
  if (request.method === 'GET') return sendJson(response, 404, { status: { error: 'Not found: Collection `docs-v2` doesn\'t exist!' }, time: 0 });
  sendJson(response, 200, { status: 'ok', result: request.path.includes('/index') ? { operation_id: 1, status: 'completed' } : true, time: 0 });
}

/** The body of `PUT /collections/docs-v2` the store sends when it opens under `env` (callers close the fake servers). */
export async function collectionCreateRequest(env: Record<string, string>, model: string): Promise<Record<string, unknown>> {
  const server = await startFakeServer(qdrantWithoutCollection);
  const store = await createStore(loadConfig({ QDRANT_URL: server.url, QDRANT_COLLECTION: 'docs-v2', ...env }));
  await store.open({ model, dimension: 1024 });
  return server.requests.find((request) => request.method === 'PUT' && request.path === '/collections/docs-v2')!.body as Record<string, unknown>;
}
