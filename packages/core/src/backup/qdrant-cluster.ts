import { RagError } from '../errors.ts';
import { QdrantSnapshots } from './qdrant-snapshots.ts';
import { httpDispatcher } from '../http/http-dispatcher.ts';

/** One peer of the cluster as the backup reaches it: its id, its p2p URI and its own REST URL. */
export interface QdrantPeer {
  peerId: number;
  /** The URI it announced (`--uri`, e.g. http://qdrant-1.qdrant-headless.rag.svc.cluster.local:6335/); '' off cluster mode. */
  uri: string;
  restUrl: string;
}

export interface QdrantClusterOptions {
  /** The Service URL (QDRANT_URL): any peer answers GET /cluster for the whole cluster. */
  url: string;
  apiKey?: string | undefined;
  /** Every peer's REST port (qdrant/qdrant.yaml: 6333 on each pod), put in place of the p2p port of its URI. */
  restPort?: number | undefined;
  /** Where a peer of URI `uri` answers REST, when not at its host on `restPort` (tests). */
  restUrlOf?: ((uri: string) => string) | undefined;
  timeoutMs?: number | undefined;
}

/**
 * The peers of a Qdrant cluster and where each one keeps a collection's shards. A collection snapshot holds only the
 * shards of the peer that writes it ("In a distributed setup ... you must create snapshots for each node
 * separately", https://qdrant.tech/documentation/snapshots/), so a backup asks every peer by its own address
 * instead of the Service, which would reach one at random.
 * - `GET /cluster` → `{status: "enabled", peer_id, peers: {<id>: {uri}}, …}` or `{status: "disabled"}`
 *   (https://api.qdrant.tech/v-1-17-x/api-reference/distributed/cluster-status);
 * - `GET /collections/{c}/cluster` on a peer → `{peer_id, shard_count, local_shards: [{shard_id, …}], remote_shards, …}`
 *   (https://api.qdrant.tech/v-1-17-x/api-reference/distributed/collection-cluster-info).
 */
export class QdrantCluster {
  constructor(private readonly options: QdrantClusterOptions) {}

  async peers(): Promise<QdrantPeer[]> {
    const status = (await this.get(this.options.url, '/cluster')) as { status: string; peers?: Record<string, { uri: string }> };
    if (status.status !== 'enabled' || !status.peers) return [{ peerId: 0, uri: '', restUrl: this.options.url }];
    return Object.entries(status.peers)
      .map(([id, peer]) => ({ peerId: Number(id), uri: peer.uri, restUrl: this.restUrlOf(peer.uri) }))
      .sort((a, b) => a.uri.localeCompare(b.uri));
  }

  /** The ids of the shards of `collection` this peer holds, and the collection's shard count; undefined when it has no such collection. */
  async localShards(peer: QdrantPeer, collection: string): Promise<{ shardCount: number; shards: number[] } | undefined> {
    const info = (await this.get(peer.restUrl, `/collections/${encodeURIComponent(collection)}/cluster`, true)) as
      | { shard_count: number; local_shards: Array<{ shard_id: number }> }
      | undefined;
    if (!info) return undefined;
    return { shardCount: info.shard_count, shards: info.local_shards.map((shard) => shard.shard_id).sort((a, b) => a - b) };
  }

  snapshotsOf(peer: QdrantPeer): QdrantSnapshots {
    return new QdrantSnapshots({ url: peer.restUrl, apiKey: this.options.apiKey, timeoutMs: this.options.timeoutMs });
  }

  private restUrlOf(uri: string): string {
    if (this.options.restUrlOf) return this.options.restUrlOf(uri);
    const url = new URL(uri);
    url.port = String(this.options.restPort ?? 6333);
    return url.origin;
  }

  private async get(base: string, path: string, missingIsUndefined = false): Promise<unknown> {
    const url = `${base.replace(/\/$/, '')}${path}`;
    const response = await fetch(url, { headers: this.options.apiKey ? { 'api-key': this.options.apiKey } : {}, signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000), dispatcher: httpDispatcher }).catch((error: unknown) => {
      throw new RagError('RAG_STORE_UNAVAILABLE', `Cannot reach Qdrant for GET ${path}: ${(error as Error).message}`, { cause: error });
    });
    if (missingIsUndefined && response.status === 404) return undefined;
    if (!response.ok) throw new RagError('RAG_STORE_UNAVAILABLE', `Qdrant answered ${response.status} to GET ${path}: ${(await response.text().catch(() => '')).slice(0, 300)}`);
    return ((await response.json()) as { result: unknown }).result;
  }
}
