/**
 * Collection snapshots for the fake Qdrant, as Qdrant's API documents them (v1.17,
 * https://api.qdrant.tech/v-1-17-x/api-reference/snapshots):
 * - `POST /collections/{c}/snapshots[?wait=true]` → `SnapshotDescription {name, size, creation_time, checksum}`
 *   (checksum: SHA-256 of the file, hex);
 * - `GET /collections/{c}/snapshots` → the descriptions; `GET /collections/{c}/snapshots/{name}` → the file;
 *   `DELETE /collections/{c}/snapshots/{name}` → true;
 * - `POST /collections/{c}/snapshots/upload?priority=snapshot&checksum=…` with a multipart/form-data body
 *   whose `snapshot` part is the file: "recovers local collection data from an uploaded snapshot. This will
 *   overwrite any collection data stored on the node. If the collection does not exist, it will be
 *   created"; a checksum that does not match is refused.
 * The file is the fake's own format (the collection as JSON), not Qdrant's tar: what a test can check is
 * that what was saved comes back whole.
 */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { sendJson, type RecordedRequest } from '../../../../packages/core/test/adapters/fake-server.ts';
import { type FakeQdrant, qdrantError } from './fake-qdrant.ts';

interface StoredSnapshot {
  name: string;
  file: string;
  creation_time: string;
}

export class FakeQdrantSnapshots {
  /** collection → its snapshots, oldest first (Qdrant keeps them in its snapshots_path). */
  readonly snapshots = new Map<string, StoredSnapshot[]>();
  /** Each upload's query (priority, checksum), for the tests to assert. */
  readonly uploads: URLSearchParams[] = [];
  private sequence = 0;

  constructor(private readonly qdrant: FakeQdrant) {}

  /** The shards this node holds of each collection (GET /collections/{c}/cluster); one shard, 0, unless a test sets them. */
  readonly localShards = new Map<string, number[]>();
  /** GET /cluster: a node off cluster mode answers `{status: "disabled"}` (cluster-status); a test of a cluster sets the peers. */
  clusterStatus: Record<string, unknown> = { status: 'disabled' };

  handle = (request: RecordedRequest, response: ServerResponse): void => {
    const url = new URL(request.path, 'http://qdrant');
    if (request.method === 'GET' && url.pathname === '/cluster') return ok(response, this.clusterStatus);
    const cluster = /^\/collections\/([^/]+)\/cluster$/.exec(url.pathname);
    if (request.method === 'GET' && cluster) return this.collectionCluster(decodeURIComponent(cluster[1]!), response);
    const match = /^\/collections\/([^/]+)\/snapshots(?:\/(.+))?$/.exec(url.pathname);
    if (!match) return this.qdrant.handle(request, response);
    const collection = decodeURIComponent(match[1]!);
    const name = match[2] === undefined ? undefined : decodeURIComponent(match[2]);
    if (request.method === 'POST' && name === undefined) return this.create(collection, response);
    if (request.method === 'GET' && name === undefined) return ok(response, (this.snapshots.get(collection) ?? []).map(describe));
    if (request.method === 'POST' && name === 'upload') return this.recover(collection, request, url.searchParams, response);
    const snapshot = this.snapshots.get(collection)?.find((candidate) => candidate.name === name);
    if (!snapshot) return qdrantError(response, 404, `Not found: Snapshot ${name} not found`);
    if (request.method === 'GET') {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      return void response.end(snapshot.file);
    }
    if (request.method === 'DELETE') {
      this.snapshots.set(collection, this.snapshots.get(collection)!.filter((candidate) => candidate !== snapshot));
      return ok(response, true);
    }
    qdrantError(response, 404, `Not found: ${request.method} ${url.pathname}`);
  };

  /** `GET /collections/{c}/cluster` (https://api.qdrant.tech/v-1-17-x/api-reference/distributed/collection-cluster-info). */
  private collectionCluster(collection: string, response: ServerResponse): void {
    const shards = this.localShards.get(collection) ?? (this.qdrant.collections.has(collection) ? [0] : undefined);
    if (!shards) return qdrantError(response, 404, `Not found: Collection \`${collection}\` doesn't exist!`);
    const peerId = Number(this.clusterStatus.peer_id ?? 0);
    ok(response, { peer_id: peerId, shard_count: Math.max(1, ...shards.map((shard) => shard + 1)), local_shards: shards.map((shard_id) => ({ shard_id, points_count: this.qdrant.collections.get(collection)?.points.size ?? 0, state: 'Active' })), remote_shards: [], shard_transfers: [] });
  }

  private create(collection: string, response: ServerResponse): void {
    const state = this.qdrant.collections.get(collection);
    if (!state) return qdrantError(response, 404, `Not found: Collection \`${collection}\` doesn't exist!`);
    const file = JSON.stringify({ config: state.config, points: [...state.points.values()], payloadIndexes: [...state.payloadIndexes] });
    this.sequence += 1;
    const creation_time = new Date(Date.UTC(2026, 11, 1, 4, 0, this.sequence)).toISOString().slice(0, 19);
    const snapshot = { name: `${collection}-8130547437296871-${creation_time.replaceAll(/[T:]/g, '-')}.snapshot`, file, creation_time };
    this.snapshots.set(collection, [...(this.snapshots.get(collection) ?? []), snapshot]);
    ok(response, describe(snapshot));
  }

  private recover(collection: string, request: RecordedRequest, query: URLSearchParams, response: ServerResponse): void {
    this.uploads.push(query);
    const boundary = /boundary=([^;]+)/.exec(String(request.headers['content-type']))?.[1];
    const file = boundary ? formFile(String(request.body), boundary, 'snapshot') : undefined;
    if (file === undefined) return qdrantError(response, 400, 'Bad request: no snapshot file in the form');
    const checksum = query.get('checksum');
    if (checksum && checksum !== sha256(file)) return qdrantError(response, 400, `Bad request: Snapshot checksum mismatch: expected ${checksum}, got ${sha256(file)}`);
    const saved = JSON.parse(file);
    this.qdrant.collections.set(collection, {
      config: saved.config,
      points: new Map(saved.points.map((point: { id: string }) => [point.id, point])),
      payloadIndexes: new Map(saved.payloadIndexes),
    });
    ok(response, true);
  }
}

function describe(snapshot: StoredSnapshot) {
  return { name: snapshot.name, creation_time: snapshot.creation_time, size: Buffer.byteLength(snapshot.file), checksum: sha256(snapshot.file) };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The content of the form part named `field` (a text file here). */
function formFile(body: string, boundary: string, field: string): string | undefined {
  for (const part of body.split(`--${boundary}`)) {
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd === -1 || !new RegExp(`name="${field}"`).test(part.slice(0, headerEnd))) continue;
    return part.slice(headerEnd + 4, part.lastIndexOf('\r\n'));
  }
  return undefined;
}

function ok(response: ServerResponse, result: unknown): void {
  sendJson(response, 200, { status: 'ok', result, time: 0.0001 });
}
