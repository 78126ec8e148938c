import { rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';

/** How often a running sync refreshes its mark. */
const HEARTBEAT_MS = 5_000;
/** A mark not refreshed for this long belongs to a sync that died (SIGKILL, a lost node): readers ignore it. */
const STALE_AFTER_MS = 30_000;

/**
 * A file beside an embedded table saying that a sync is writing to it, refreshed while the sync runs and
 * removed when it ends. Readers that see it keep answering from the view they hold instead of reloading
 * at each of the sync's intermediate versions, and load the view the sync saves once the mark is gone.
 */
export async function markWriting(path: string): Promise<() => Promise<void>> {
  await writeFile(path, JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() }));
  const heartbeat = setInterval(() => {
    const now = new Date();
    utimes(path, now, now).catch(() => undefined);
  }, HEARTBEAT_MS);
  heartbeat.unref();
  return async () => {
    clearInterval(heartbeat);
    await rm(path, { force: true });
  };
}

/** Whether a live sync's mark is at `path`: present and refreshed within STALE_AFTER_MS. */
export async function isWriting(path: string): Promise<boolean> {
  const info = await stat(path).catch(() => undefined);
  return info !== undefined && Date.now() - info.mtimeMs < STALE_AFTER_MS;
}
