import { createHash, randomUUID } from 'node:crypto';
import { appendFile, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { normalizeGroups, sameGroups } from '../access/groups.ts';

/** The document a cached context was written for: it is served to that document only, while its access groups stay the same. */
export interface ContextOwner {
  source: string;
  groups: readonly string[];
}

/** One line of the file. Lines written before owners were recorded have neither field: they are never served, and go at the next prune. */
interface CacheLine {
  key: string;
  context: string;
  source?: string;
  groups?: string[];
}

/**
 * Contexts the gateway already wrote, by (document hash, chunk hash, model, prompt version), in a JSON
 * Lines file under RAG_DATA_DIR. A file rather than the previous points' payload: contexts are asked
 * again mostly when a collection is rebuilt (another embedding model, another store), when the previous
 * payload is in another collection or gone, and the file serves every collection and both stores.
 * An entry is appended as soon as its context is written, so an interrupted run loses none.
 *
 * A context repeats what its document says, so it is kept no longer than the document is indexed with
 * the same access groups: an entry names its document and that document's groups, is served to nothing
 * else, and goes (from memory and from the file) when the ingest prunes the document (forget).
 */
export class ContextCache {
  /** By document, then by key: two copies of one file are two documents, each with its own entries. */
  private readonly documents = new Map<string, Map<string, { context: string; groups: string[] }>>();
  private writing: Promise<void> = Promise.resolve();

  private constructor(private readonly file: string | undefined) {}

  /** `file` undefined: in memory only (tests, a single eval run). */
  static async open(file: string | undefined): Promise<ContextCache> {
    const cache = new ContextCache(file);
    if (file) await cache.load(file);
    return cache;
  }

  get size(): number {
    let size = 0;
    for (const entries of this.documents.values()) size += entries.size;
    return size;
  }

  /** The context written for this document with these groups; undefined for any other document, or after its groups changed. */
  get(key: string, owner: ContextOwner): string | undefined {
    const entry = this.documents.get(owner.source)?.get(key);
    return entry && sameGroups(entry.groups, normalizeGroups(owner.groups)) ? entry.context : undefined;
  }

  async put(key: string, context: string, owner: ContextOwner): Promise<void> {
    const line: CacheLine = { key, context, source: owner.source, groups: normalizeGroups(owner.groups) };
    this.remember(owner.source, key, context, line.groups!);
    await this.serially(async (file) => {
      await mkdir(dirname(file), { recursive: true });
      await appendFile(file, `${JSON.stringify(line)}\n`);
    });
  }

  /**
   * Drops every context written for these documents (deleted from the index), and rewrites the file
   * without them and without lines that name no document.
   */
  async forget(sources: Iterable<string>): Promise<void> {
    let forgotten = 0;
    for (const source of sources) if (this.documents.delete(source)) forgotten += 1;
    if (forgotten > 0) await this.serially((file) => this.rewrite(file));
  }

  /** Appends and rewrites one at a time, in call order; nothing without a file. */
  private async serially(write: (file: string) => Promise<void>): Promise<void> {
    const file = this.file;
    if (!file) return;
    this.writing = this.writing.catch(() => undefined).then(() => write(file));
    await this.writing;
  }

  /** The entries held, through a temporary file renamed into place: a killed rewrite leaves the old file whole. */
  private async rewrite(file: string): Promise<void> {
    const lines: string[] = [];
    for (const [source, entries] of this.documents) {
      for (const [key, { context, groups }] of entries) lines.push(JSON.stringify({ key, context, source, groups } satisfies CacheLine));
    }
    const temporary = `${file}.${randomUUID()}.tmp`;
    try {
      await writeFile(temporary, lines.map((line) => `${line}\n`).join(''));
      await rename(temporary, file);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  private remember(source: string, key: string, context: string, groups: string[]): void {
    let entries = this.documents.get(source);
    if (!entries) this.documents.set(source, (entries = new Map()));
    entries.set(key, { context, groups });
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
        const entry = JSON.parse(line) as Partial<Record<keyof CacheLine, unknown>>;
        if (typeof entry.key !== 'string' || typeof entry.context !== 'string' || typeof entry.source !== 'string' || !isStringList(entry.groups)) continue;
        this.remember(entry.source, entry.key, entry.context, normalizeGroups(entry.groups));
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

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}
