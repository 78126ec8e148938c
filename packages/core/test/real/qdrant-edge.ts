/**
 * Qdrant's engine behind the REST API that QdrantStore speaks: a local HTTP server on port 0 whose
 * point operations (upsert, delete, set payload, query, retrieve, scroll, count) run in Qdrant Edge
 * (qdrant-edge-oracle.py, the server's segment and query code in-process). Collection-level bookkeeping
 * that Edge has no notion of (the collection's name, `metadata`, the list of payload indexes) is kept
 * here. So the real adapter's requests, filters and fusion included, are answered by Qdrant's own code.
 * REST shapes: https://api.qdrant.tech/api-reference (envelope `{status: "ok", result, time}`,
 * errors `{status: {error}, time}`).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { sendJson, startFakeServer, type RecordedRequest } from '../adapters/fake-server.ts';

const ORACLE = fileURLToPath(new URL('./qdrant-edge-oracle.py', import.meta.url));

/** One Qdrant Edge process: requests go one at a time, each answered by one JSON line. */
export class QdrantEdgeOracle {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly answers: AsyncIterator<string>;
  private queue: Promise<unknown> = Promise.resolve();
  private stderr = '';

  constructor(python: string) {
    this.child = spawn(python, [ORACLE], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr.on('data', (data: Buffer) => (this.stderr += data.toString('utf8')));
    this.answers = createInterface({ input: this.child.stdout })[Symbol.asyncIterator]();
  }

  /** Runs one operation (see the oracle's docstring); rejects with Qdrant Edge's error. */
  call(op: string, body: unknown, extra: Record<string, unknown> = {}): Promise<unknown> {
    const next = this.queue.then(async () => {
      this.child.stdin.write(`${JSON.stringify({ op, body, ...extra })}\n`);
      const line = await this.answers.next();
      if (line.done) throw new Error(`Qdrant Edge oracle exited: ${this.stderr.slice(-2000)}`);
      const answer = JSON.parse(line.value) as { result?: unknown; error?: string };
      if (answer.error !== undefined) throw new EdgeError(answer.error);
      return answer.result;
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    this.child.stdin.end();
    if (this.child.exitCode === null) await new Promise((resolve) => this.child.once('exit', resolve));
  }
}

class EdgeError extends Error {}

export interface QdrantEdgeServer {
  url: string;
  oracle: QdrantEdgeOracle;
  /** Every request QdrantStore sent, for assertions on what reached Qdrant. */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

interface Collection {
  name: string;
  config: Record<string, unknown>;
  indexes: Map<string, string>;
}

/** Point operations handed to the oracle, by `METHOD /suffix` after /collections/{name}. */
const POINT_ROUTES: Record<string, string> = {
  'PUT /index': 'index',
  'PUT /points': 'upsert',
  'POST /points/delete': 'delete',
  'POST /points/payload': 'set_payload',
  'POST /points/query': 'query',
  'POST /points': 'retrieve',
  'POST /points/scroll': 'scroll',
  'POST /points/count': 'count',
  'POST /facet': 'facet',
};

/** Starts the oracle and the REST front; one collection (one Edge shard) per server. */
export async function startQdrantEdge(python: string): Promise<QdrantEdgeServer> {
  const oracle = new QdrantEdgeOracle(python);
  const shardDir = await mkdtemp(join(tmpdir(), 'rag-qdrant-edge-'));
  let collection: Collection | undefined;

  const handle = async (request: RecordedRequest, response: Parameters<typeof sendJson>[0]) => {
    const { pathname } = new URL(request.path, 'http://edge');
    const match = /^\/collections\/([^/]+)(\/.*)?$/.exec(pathname);
    if (!match) return fail(response, 404, `Not found: ${request.method} ${pathname}`);
    const name = decodeURIComponent(match[1]!);
    const route = `${request.method} ${match[2] ?? ''}`;
    const body = (request.body ?? {}) as Record<string, any>;
    if (route === 'PUT ') {
      if (collection) return fail(response, 409, `Wrong input: Collection \`${name}\` already exists!`);
      await oracle.call('create', body, { path: join(shardDir, 'shard') });
      collection = { name, config: { params: { vectors: body.vectors, sparse_vectors: body.sparse_vectors }, metadata: body.metadata ?? {} }, indexes: new Map() };
      return ok(response, true);
    }
    if (!collection || collection.name !== name) return fail(response, 404, `Not found: Collection \`${name}\` doesn't exist!`);
    if (route === 'GET ') {
      const payloadSchema = Object.fromEntries([...collection.indexes].map(([field, type]) => [field, { data_type: type }]));
      const { count } = (await oracle.call('count', {})) as { count: number };
      return ok(response, { status: 'green', optimizer_status: 'ok', points_count: count, config: collection.config, payload_schema: payloadSchema });
    }
    if (route === 'PATCH ') {
      collection.config.metadata = { ...(collection.config.metadata as object), ...(body.metadata ?? {}) };
      return ok(response, true);
    }
    const op = POINT_ROUTES[route];
    if (!op) return fail(response, 404, `Not found: ${request.method} ${pathname}`);
    try {
      const result = await oracle.call(op, body);
      if (op === 'index') collection.indexes.set(body.field_name, body.field_schema);
      return ok(response, result);
    } catch (error) {
      if (error instanceof EdgeError) return fail(response, 400, `Bad request: ${error.message}`);
      throw error;
    }
  };

  const server = await startFakeServer(handle);
  return {
    url: server.url,
    oracle,
    requests: server.requests,
    async close() {
      await new Promise<void>((resolve) => {
        server.server.closeAllConnections();
        server.server.close(() => resolve());
      });
      await oracle.close();
      await rm(shardDir, { recursive: true, force: true });
    },
  };
}

function ok(response: Parameters<typeof sendJson>[0], result: unknown): void {
  sendJson(response, 200, { status: 'ok', result, time: 0 });
}

function fail(response: Parameters<typeof sendJson>[0], status: number, error: string): void {
  sendJson(response, status, { status: { error }, time: 0 });
}
