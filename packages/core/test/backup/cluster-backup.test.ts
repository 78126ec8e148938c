/**
 * Backups of a collection spread over Qdrant peers: a collection snapshot holds only the shards of the peer that
 * writes it ("In a distributed setup ... you must create snapshots for each node separately",
 * https://qdrant.tech/documentation/snapshots/), so the backup asks each peer by its own address, found with
 * `GET /cluster` (https://api.qdrant.tech/v-1-17-x/api-reference/distributed/cluster-status), records which shards
 * each held (`GET /collections/{c}/cluster`, collection-cluster-info), and the restore puts each snapshot back on its
 * peer after checking the layout. Three fake peers (FakeQdrant with its snapshot API, as Qdrant documents it) hold
 * different points, as peers holding different shards do; the bucket is the fake GCS server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupCollection, QdrantCluster, restoreCollection, SnapshotArchive } from '../../src/backup/index.ts';
import { FakeQdrant } from '../../../../services/retrieval/test/fakes/fake-qdrant.ts';
import { FakeQdrantSnapshots } from '../../../../services/retrieval/test/fakes/fake-qdrant-snapshots.ts';
import { closeFakeServers, startFakeServer } from '../adapters/fake-server.ts';
import { FakeGcsServer } from '../ingest/fake-gcs-server.ts';

const COLLECTION = 'docs-v2';
/** 2 shards, each on 2 of the 3 peers, as gke-distributed creates the collection. */
const SHARDS = [[0], [0, 1], [1]];

interface Peer {
  uri: string;
  url: string;
  qdrant: FakeQdrant;
  snapshots: FakeQdrantSnapshots;
}

const gcs = new FakeGcsServer('acme-rag-backups');
const peers: Peer[] = [];
let cluster: QdrantCluster;

/** What peer i holds: its own points, as a peer holds its own shards' points. */
function fill(peer: Peer, index: number): void {
  const points = new Map(Array.from({ length: 3 }, (_, n) => [`p${index}-${n}`, { id: `p${index}-${n}`, payload: { source: `doc-${index}.md`, chunk_index: n }, vector: {} }]));
  peer.qdrant.collections.set(COLLECTION, { config: { params: {} }, points, payloadIndexes: new Map() } as never);
}
const state = (peer: Peer) => JSON.stringify([...(peer.qdrant.collections.get(COLLECTION)?.points.keys() ?? [])].sort());

beforeAll(async () => {
  await gcs.start();
  for (let index = 0; index < 3; index++) {
    const qdrant = new FakeQdrant();
    const snapshots = new FakeQdrantSnapshots(qdrant);
    const { url } = await startFakeServer(snapshots.handle);
    const peer = { uri: `http://qdrant-${index}.qdrant-headless.rag.svc.cluster.local:6335/`, url, qdrant, snapshots };
    snapshots.localShards.set(COLLECTION, SHARDS[index]!);
    fill(peer, index);
    peers.push(peer);
  }
  const status = { status: 'enabled', peer_id: 100, peers: Object.fromEntries(peers.map((peer, index) => [String(100 + index), { uri: peer.uri }])), raft_info: { term: 1, commit: 9, pending_operations: 0, leader: 100, role: 'Leader', is_voter: true } };
  peers.forEach((peer, index) => (peer.snapshots.clusterStatus = { ...status, peer_id: 100 + index }));
  // The Service reaches a peer at random; here, peer 1. Each peer's REST address comes from its URI.
  cluster = new QdrantCluster({ url: peers[1]!.url, restUrlOf: (uri) => peers.find((peer) => peer.uri === uri)!.url });
});

afterAll(async () => {
  await closeFakeServers();
  await gcs.close();
});

describe('a backup of a collection over 3 peers', () => {
  const archive = () => new SnapshotArchive({ bucket: 'acme-rag-backups', prefix: 'qdrant-snapshots/', apiEndpoint: gcs.baseUrl });

  it('takes one snapshot on every peer, by its own address, and records the shards each held', async () => {
    const result = await backupCollection(cluster, archive(), COLLECTION, 7, new Date('2026-12-02T02:17:00Z'));
    expect(result.object).toBe('qdrant-snapshots/docs-v2/2026-12-02T02-17-00.000Z/layout.json');
    expect(result.layout.shardCount).toBe(2);
    expect(result.layout.peers.map((peer) => ({ peerId: peer.peerId, uri: peer.uri, shards: peer.shards }))).toEqual(peers.map((peer, index) => ({ peerId: 100 + index, uri: peer.uri, shards: SHARDS[index] })));
    for (const peer of peers) expect(peer.snapshots.snapshots.get(COLLECTION), 'created and then deleted on each peer').toEqual([]);
    expect(new Set(result.layout.peers.map((peer) => peer.object)).size).toBe(3);
  });

  it('restores each peer\'s own points onto it after every disk is lost and the collection re-created empty', async () => {
    const before = peers.map(state);
    for (const peer of peers) peer.qdrant.collections.set(COLLECTION, { config: { params: {} }, points: new Map(), payloadIndexes: new Map() } as never);
    const restored = await restoreCollection(cluster, archive(), COLLECTION);
    expect(restored).toMatch(/layout\.json$/);
    expect(peers.map(state)).toEqual(before);
    for (const peer of peers) expect(peer.snapshots.uploads.at(-1)?.get('checksum')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses, restoring nothing, when a peer now holds other shards than the backup records', async () => {
    const uploads = peers.map((peer) => peer.snapshots.uploads.length);
    peers[2]!.snapshots.localShards.set(COLLECTION, [0]);
    try {
      await expect(restoreCollection(cluster, archive(), COLLECTION)).rejects.toMatchObject({ code: 'RAG_BACKUP_LAYOUT_MISMATCH', message: expect.stringContaining('qdrant-2.qdrant-headless.rag.svc.cluster.local:6335/ holds shards [0] of docs-v2, the backup [1]') });
      expect(peers.map((peer) => peer.snapshots.uploads.length)).toEqual(uploads);
    } finally {
      peers[2]!.snapshots.localShards.set(COLLECTION, SHARDS[2]!);
    }
  });

  it('refuses when a peer of the backup is not in the cluster, and when a peer has no such collection', async () => {
    const status = peers[1]!.snapshots.clusterStatus;
    peers[1]!.snapshots.clusterStatus = { ...status, peers: Object.fromEntries(Object.entries(status.peers as object).slice(0, 2)) };
    try {
      await expect(restoreCollection(cluster, archive(), COLLECTION)).rejects.toMatchObject({ code: 'RAG_BACKUP_LAYOUT_MISMATCH', message: expect.stringContaining('no peer http://qdrant-2.') });
    } finally {
      peers[1]!.snapshots.clusterStatus = status;
    }
    peers[0]!.snapshots.localShards.delete(COLLECTION);
    peers[0]!.qdrant.collections.delete(COLLECTION);
    await expect(restoreCollection(cluster, archive(), COLLECTION)).rejects.toMatchObject({ code: 'RAG_BACKUP_LAYOUT_MISMATCH', message: expect.stringContaining('holds no collection docs-v2: create it with 2 shards') });
  });
});

// Issue 43 item 6: each snapshot was checked only just before its own upload, so an altered third snapshot
// stopped the restore after the first two peers were already replaced: a cluster half at the backup, half not.
describe('a backup whose last snapshot was altered in the bucket', () => {
  const archive = () => new SnapshotArchive({ bucket: 'acme-rag-backups', prefix: 'altered/', apiEndpoint: gcs.baseUrl });

  it('restores no peer at all when any peer\'s snapshot fails its checksum', async () => {
    for (const [index, peer] of peers.entries()) {
      peer.snapshots.localShards.set(COLLECTION, SHARDS[index]!);
      fill(peer, index);
    }
    const { layout } = await backupCollection(cluster, archive(), COLLECTION, 7, new Date('2026-12-03T02:17:00Z'));
    const object = layout.peers[2]!.object;
    const stored = gcs.get(object)!;
    gcs.put(object, Buffer.concat([stored.bytes, Buffer.from('x')]), stored.metadata);
    const uploads = peers.map((peer) => peer.snapshots.uploads.length);
    await expect(restoreCollection(cluster, archive(), COLLECTION)).rejects.toMatchObject({ code: 'RAG_BACKUP_CHECKSUM_MISMATCH', message: expect.stringContaining(object) });
    expect(peers.map((peer) => peer.snapshots.uploads.length)).toEqual(uploads);
  });
});

// Issue 43 item 6: layout.json was trusted as written. `{}` threw a TypeError (a stack trace, no error code); a layout
// with no peers fell back to the single-node path and put the folder's first snapshot on the first peer, skipping
// the layout check that a multi-peer backup exists for; and a layout of any size was read into memory whole.
describe('a backup whose layout.json is not a backup layout', () => {
  const archive = (prefix: string) => new SnapshotArchive({ bucket: 'acme-rag-backups', prefix, apiEndpoint: gcs.baseUrl });

  async function plant(prefix: string, layout: string | Buffer): Promise<void> {
    const { layout: written } = await backupCollection(cluster, archive(prefix), COLLECTION, 7, new Date('2026-12-04T02:17:00Z'));
    const snapshot = gcs.get(written.peers[0]!.object)!;
    gcs.put(`${prefix}${COLLECTION}/2026-12-05T02-17-00.000Z/peer-100-planted.snapshot`, snapshot.bytes, snapshot.metadata);
    gcs.put(`${prefix}${COLLECTION}/2026-12-05T02-17-00.000Z/layout.json`, layout);
  }

  it.each([
    ['empty', 'shape-empty/', '{}'],
    ['without peers', 'shape-no-peers/', JSON.stringify({ collection: COLLECTION, shardCount: 2, peers: [] })],
    ['not JSON', 'shape-not-json/', '{"peers": ['],
    ['of 2 MiB', 'shape-huge/', `{"collection": "${'x'.repeat(2 * 1024 * 1024)}"}`],
  ])('refuses a layout %s with RAG_BACKUP_UNVERIFIED, restoring nothing', async (_name, prefix, layout) => {
    await plant(prefix, layout);
    const uploads = peers.map((peer) => peer.snapshots.uploads.length);
    await expect(restoreCollection(cluster, archive(prefix), COLLECTION)).rejects.toMatchObject({ code: 'RAG_BACKUP_UNVERIFIED', message: expect.stringContaining(`${prefix}${COLLECTION}/2026-12-05T02-17-00.000Z/layout.json`) });
    expect(peers.map((peer) => peer.snapshots.uploads.length)).toEqual(uploads);
  });
});
