import { z } from 'zod';
import { RagError } from '../errors.ts';

/**
 * The most a layout.json may weigh: one line per peer, a few hundred bytes each. A larger object is not one the
 * backup wrote, and is not read into memory.
 */
export const MAX_LAYOUT_BYTES = 1024 * 1024;

const peerSchema = z.object({
  peerId: z.number().int(),
  uri: z.string(),
  shards: z.array(z.number().int().min(0)),
  object: z.string().min(1),
  size: z.number().min(0),
  /** Absent in layouts written before checksums were recorded. */
  checksum: z.string().optional(),
});

/**
 * What a backup records beside its snapshots: which peer held which shards, so that a restore puts each back. A
 * backup has at least one peer (backupCollection refuses to write one without): a layout without any would send
 * the restore down the single-node path, past the layout check.
 */
const layoutSchema = z.object({ collection: z.string(), shardCount: z.number().int().min(1), peers: z.array(peerSchema).min(1) });

export type BackupLayout = z.infer<typeof layoutSchema>;

/** The layout in `text` (undefined: past MAX_LAYOUT_BYTES), or RAG_BACKUP_UNVERIFIED naming what is wrong with it. */
export function parseBackupLayout(text: string | undefined, object: string): BackupLayout {
  const refuse = (why: string) => new RagError('RAG_BACKUP_UNVERIFIED', `Nothing was restored: ${object} is not a layout a backup wrote (${why}). Restore another backup with --object.`);
  if (text === undefined) throw refuse(`over ${MAX_LAYOUT_BYTES} bytes`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw refuse('not JSON');
  }
  const parsed = layoutSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw refuse(`"${issue.path.join('.')}": ${issue.message}`);
  }
  return parsed.data;
}
