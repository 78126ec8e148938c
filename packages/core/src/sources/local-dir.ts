import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { ACCESS_FILE, AccessRules } from '../access/access-rules.ts';
import { RagError } from '../errors.ts';
import type { DocumentSource, SourceDocument } from './document-source.ts';

const STATS_AT_ONCE = 64;

/**
 * Every file under a folder, recursively, in sorted path order (the order GCS lists a bucket).
 * The document uri is the path relative to the folder, with `/`. `include` narrows the walk to
 * some files or sub-folders (the default corpus: README.md and docs/). The folder's `.rag-access.yaml`
 * gives each document its groups (see AccessRules) and is never listed itself.
 */
export class LocalDirectorySource implements DocumentSource {
  readonly description: string;
  private readonly root: string;
  private readonly include: string[];

  constructor(root: string, options: { include?: string[] } = {}) {
    this.root = resolve(root);
    this.include = (options.include ?? ['.']).map((path) => resolve(this.root, path));
    this.description = options.include ? `${options.include.join(', ')} in ${this.root}` : `folder ${this.root}`;
  }

  async *list(): AsyncIterable<SourceDocument> {
    // Read before any document is listed: an unreadable access file must stop the run, not make documents public.
    const access = await AccessRules.load(this.root);
    const accessFile = join(this.root, ACCESS_FILE);
    const paths = await Promise.all(this.include.map((path) => this.walkPath(path))).catch((error: unknown) => {
      throw new RagError('RAG_SOURCE_UNAVAILABLE', `Cannot read ${this.description}.`, { cause: error });
    });
    // Overlapping include paths (docs and docs/api.md) list a file once.
    const files = [...new Set(paths.flat())].sort().filter((path) => path !== accessFile);
    // Stats in small parallel batches: one at a time, a no-op run over 10k files spent most of its time waiting on them.
    for (let start = 0; start < files.length; start += STATS_AT_ONCE) {
      yield* await Promise.all(files.slice(start, start + STATS_AT_ONCE).map((path) => this.document(path, access)));
    }
  }

  private async walkPath(path: string): Promise<string[]> {
    return (await stat(path)).isDirectory() ? this.walk(path) : [path];
  }

  private async document(path: string, access: AccessRules): Promise<SourceDocument> {
    const info = await stat(path);
    const uri = relative(this.root, path).split(sep).join('/');
    return {
      uri,
      sourceVersion: `${info.mtimeMs}:${info.size}`,
      size: info.size,
      groups: access.groupsOf(uri),
      read: () => readFile(path),
    };
  }

  private async walk(folder: string): Promise<string[]> {
    const entries = await readdir(folder, { withFileTypes: true });
    const nested = await Promise.all(
      entries
        .filter((entry) => !entry.name.startsWith('.') && entry.name !== 'node_modules')
        .map(async (entry) => {
          const path = join(folder, entry.name);
          if (entry.isDirectory()) return this.walk(path);
          return entry.isFile() ? [path] : [];
        }),
    );
    return nested.flat();
  }
}
