import { randomUUID } from 'node:crypto';
import { readdir, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * A temporary file not written to for this long belongs to a save that was killed (SIGKILL, OOM, a lost
 * node) between writing it and renaming it: a save writes its file without pause, and even the final sync
 * of a million-chunk view (hundreds of MB) takes seconds.
 */
export const ABANDONED_AFTER_MS = 60_000;

/** Where a save of `path` writes before renaming: beside it, so that the rename is atomic. */
export function temporaryPathFor(path: string): string {
  return `${path}.${randomUUID()}.tmp`;
}

/**
 * Removes the temporary files that killed saves of `path` left, so that they do not pile up beside the
 * table (a 100k-chunk view is tens of MB). A save in progress in another process keeps writing to its
 * own, so only those untouched for ABANDONED_AFTER_MS go.
 */
export async function removeAbandonedTemporaries(path: string, now = Date.now()): Promise<void> {
  const folder = dirname(path);
  const prefix = `${basename(path)}.`;
  const names = await readdir(folder).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const file = join(folder, name);
    const info = await stat(file).catch(() => undefined);
    if (info && now - info.mtimeMs > ABANDONED_AFTER_MS) await rm(file, { force: true });
  }
}
