import { createHash } from 'node:crypto';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Contexts the gateway already wrote, by (document hash, chunk hash, model, prompt version), in a JSON
 * Lines file under RAG_DATA_DIR. A file rather than the previous points' payload: contexts are asked
 * again mostly when a collection is rebuilt (another embedding model, another store), when the previous
 * payload is in another collection or gone, and the file serves every collection and both stores.
 * An entry is appended as soon as its context is written, so an interrupted run loses none.
 */
export class ContextCache {
  private readonly entries = new Map<string, string>();
  private appending: Promise<void> = Promise.resolve();

  private constructor(private readonly file: string | undefined) {}

  /** `file` undefined: in memory only (tests, a single eval run). */
  static async open(file: string | undefined): Promise<ContextCache> {
    const cache = new ContextCache(file);
    if (file) await cache.load(file);
    return cache;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): string | undefined {
    return this.entries.get(key);
  }

  async put(key: string, context: string): Promise<void> {
    this.entries.set(key, context);
    if (!this.file) return;
    const file = this.file;
    this.appending = this.appending.then(async () => {
      await mkdir(dirname(file), { recursive: true });
      await appendFile(file, `${JSON.stringify({ key, context })}\n`);
    });
    await this.appending;
  }

  private async load(file: string): Promise<void> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const line of text.split('\n')) {
      // A line cut by a killed process is skipped: that context is asked again.
      try {
        const entry = JSON.parse(line) as { key?: unknown; context?: unknown };
        if (typeof entry.key === 'string' && typeof entry.context === 'string') this.entries.set(entry.key, entry.context);
      } catch {
        continue;
      }
    }
  }
}

export function contextCacheKey(parts: { documentHash: string; chunkText: string; model: string; promptVersion: string }): string {
  const chunkHash = createHash('sha256').update(parts.chunkText).digest('hex');
  return createHash('sha256').update(JSON.stringify([parts.documentHash, chunkHash, parts.model, parts.promptVersion])).digest('hex');
}
