export { backupCollection, restoreCollection, type BackupLayout, type BackupResult } from './collection-backup.ts';
export { QdrantCluster, type QdrantClusterOptions, type QdrantPeer } from './qdrant-cluster.ts';
export { QdrantSnapshots, type QdrantSnapshotsOptions, type SnapshotDescription } from './qdrant-snapshots.ts';
export { SnapshotArchive, type ArchivedBackup, type ArchivedSnapshot, type SnapshotArchiveOptions } from './snapshot-archive.ts';
