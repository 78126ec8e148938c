export { backupCollection, restoreCollection, type BackupResult } from './collection-backup.ts';
export { QdrantSnapshots, type QdrantSnapshotsOptions, type SnapshotDescription } from './qdrant-snapshots.ts';
export { SnapshotArchive, type ArchivedSnapshot, type SnapshotArchiveOptions } from './snapshot-archive.ts';
