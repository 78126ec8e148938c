import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { RagError } from '../errors.ts';
import type { DocumentSource, SourceDocument } from './document-source.ts';

/**
 * Every file under a folder, recursively, in sorted path order (the order GCS lists a bucket).
 * The document uri is the path relative to the folder, with `/`. `include` narrows the walk to
 * some files or sub-folders (the default corpus: README.md and docs/).
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
    const paths = await Promise.all(this.include.map((path) => this.walkPath(path))).catch((error: unknown) => {
      throw new RagError('RAG_SOURCE_UNAVAILABLE', `Cannot read ${this.description}.`, { cause: error });
    });
    for (const path of paths.flat().sort()) yield this.document(path);
  }

  private async walkPath(path: string): Promise<string[]> {
    return (await stat(path)).isDirectory() ? this.walk(path) : [path];
  }

  private async document(path: string): Promise<SourceDocument> {
    const info = await stat(path);
    return {
      uri: relative(this.root, path).split(sep).join('/'),
      sourceVersion: `${info.mtimeMs}:${info.size}`,
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
