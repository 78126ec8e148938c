import { parseArgs } from 'node:util';
import { isRagError, loadConfig, RagError } from '@rag/core';
import { backupCollection, QdrantCluster, restoreCollection, SnapshotArchive } from '@rag/core/backup';

const USAGE = `Usage: node dist/backup/backup.js backup  --to gs://BUCKET/PREFIX/ [--keep 7] [--collection NAME]
       node dist/backup/backup.js restore --from gs://BUCKET/PREFIX/ [--object OBJECT] [--collection NAME] [--allow-unverified]
       (from a checkout: pnpm exec tsx ingest/src/backup-cli.ts …)

backup   every Qdrant peer holding shards of the collection (QDRANT_COLLECTION) writes a snapshot of them,
         each is streamed to the bucket and deleted from its peer, with a layout of which peer held which
         shards; the bucket keeps the newest --keep (a positive integer, default 7; never the backup just
         written). Prints: backup: gs://…/layout.json (N bytes, P peers)
restore  puts each peer's snapshot of the newest backup (or --object: its folder or one of its objects)
         back on the peer of the same name, after checking it holds the same shards (RAG_BACKUP_LAYOUT_MISMATCH
         otherwise). Each snapshot must carry the checksum its backup wrote (RAG_BACKUP_UNVERIFIED otherwise,
         unless --allow-unverified) and hash to it (RAG_BACKUP_CHECKSUM_MISMATCH); Qdrant checks it again.
         Prints: restored: gs://…
Qdrant from QDRANT_URL and QDRANT_API_KEY (the read-write key; restore needs the full one). Exit 0 done, 2 failed.`;

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      to: { type: 'string' },
      from: { type: 'string' },
      object: { type: 'string' },
      keep: { type: 'string', default: '7' },
      collection: { type: 'string' },
      'allow-unverified': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const command = positionals[0];
  if (values.help || (command !== 'backup' && command !== 'restore')) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  // Checked before Qdrant or the bucket is reached: a bad --keep must neither back up nor remove anything.
  const keep = command === 'backup' ? keepOption(values.keep) : undefined;
  const config = loadConfig();
  if (!config.QDRANT_URL) throw new RagError('RAG_CONFIG_INVALID', 'QDRANT_URL is not set: backups are of a Qdrant collection.');
  const collection = values.collection ?? config.collection;
  const cluster = new QdrantCluster({ url: config.QDRANT_URL, apiKey: config.QDRANT_API_KEY });
  const location = bucketLocation(command === 'backup' ? values.to : values.from, command === 'backup' ? '--to' : '--from');
  const archive = new SnapshotArchive(location);
  if (command === 'backup') {
    const result = await backupCollection(cluster, archive, collection, keep!);
    process.stdout.write(`backup: gs://${location.bucket}/${result.object} (${result.size} bytes, ${result.layout.peers.length} peers; ${result.pruned.length} older objects removed)\n`);
  } else {
    const object = await restoreCollection(cluster, archive, collection, values.object, { allowUnverified: values['allow-unverified'] });
    process.stdout.write(`restored: gs://${location.bucket}/${object} into ${collection}\n`);
  }
  return 0;
}

/** `--keep N`: how many backups the bucket keeps, at least 1 (`abc`, `0` or an empty value once removed every one). */
function keepOption(value: string | undefined): number {
  if (value === undefined || !/^[1-9][0-9]{0,5}$/.test(value)) {
    throw new RagError('RAG_CONFIG_INVALID', `--keep takes a positive integer, the number of backups to keep (got ${JSON.stringify(value ?? '')}): nothing was backed up or removed.\n${USAGE}`);
  }
  return Number(value);
}

function bucketLocation(url: string | undefined, flag: string): { bucket: string; prefix: string } {
  const match = url ? /^gs:\/\/([^/]+)\/?(.*)$/.exec(url) : null;
  if (!match) throw new RagError('RAG_CONFIG_INVALID', `${flag} gs://BUCKET/PREFIX/ is required.`);
  const prefix = match[2]!;
  return { bucket: match[1]!, prefix: prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/` };
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${isRagError(error) ? `${error.code}: ${error.message}` : String((error as Error)?.stack ?? error)}\n`);
    process.exit(2);
  },
);
