import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { ACCESS_FILE, AccessRules, isIgnoredAccessFile } from '../access/access-rules.ts';
import { RagError } from '../errors.ts';
import { fileTypeOf, epochSecondsOf } from '../search-filter/document-metadata.ts';
import { METADATA_FILE, MetadataRules } from '../search-filter/metadata-rules.ts';
import type { DocumentSource, SkippedEntry, SourceDocument } from './document-source.ts';
import { customFieldsOf } from '../search-filter/custom-metadata-keys.ts';

const STATS_AT_ONCE = 64;
const SYMBOLIC_LINK = 'symbolic link, not followed';
const NOT_A_FILE = 'not a regular file';

interface Walk {
  files: string[];
  skipped: SkippedEntry[];
  /** Access files that would not be applied (nested, or a look-alike name): the listing is refused. */
  ignoredAccessFiles: string[];
}

/**
 * Every file under a folder, recursively, in sorted path order (the order GCS lists a bucket).
 * The document uri is the path relative to the folder, with `/`. `include` narrows the walk to
 * some files or sub-folders (the default corpus: README.md and docs/). The folder's `.rag-access.yaml`
 * gives each document its groups (see AccessRules) and is never listed itself. Symbolic links are not
 * followed (a link may leave the folder, or loop): they are counted in `skippedEntries`.
 */
export class LocalDirectorySource implements DocumentSource {
  readonly description: string;
  private readonly root: string;
  private readonly include: string[];
  private skipped: SkippedEntry[] = [];

  constructor(root: string, options: { include?: string[] } = {}) {
    this.root = resolve(root);
    this.include = (options.include ?? ['.']).map((path) => resolve(this.root, path));
    this.description = options.include ? `${options.include.join(', ')} in ${this.root}` : `folder ${this.root}`;
  }

  get skippedEntries(): readonly SkippedEntry[] {
    return this.skipped;
  }

  async *list(): AsyncIterable<SourceDocument> {
    this.skipped = [];
    // Read before any document is listed: an unreadable access file must stop the run, not make documents public.
    const access = await AccessRules.load(this.root);
    const metadataRules = await MetadataRules.load(this.root);
    const accessFile = join(this.root, ACCESS_FILE);
    const walks = await Promise.all([this.walk(this.root, { rootOnly: true }), ...this.include.map((path) => this.walkPath(path))]).catch((error: unknown) => {
      throw new RagError('RAG_SOURCE_UNAVAILABLE', `Cannot read ${this.description}.`, { cause: error });
    });
    const ignored = [...new Set(walks.flatMap((walk) => walk.ignoredAccessFiles))].sort();
    if (ignored.length > 0) throw ignoredAccessFiles(ignored.map((path) => this.uriOf(path)));
    // Overlapping include paths (docs and docs/api.md) list a file once.
    const files = [...new Set(walks.slice(1).flatMap((walk) => walk.files))].sort().filter((path) => path !== accessFile && path !== join(this.root, METADATA_FILE));
    this.skipped = uniqueByUri(walks.slice(1).flatMap((walk) => walk.skipped));
    // Stats in small parallel batches: one at a time, a no-op run over 10k files spent most of its time waiting on them.
    for (let start = 0; start < files.length; start += STATS_AT_ONCE) {
      yield* await Promise.all(files.slice(start, start + STATS_AT_ONCE).map((path) => this.document(path, access, metadataRules)));
    }
  }

  private async walkPath(path: string): Promise<Walk> {
    return (await stat(path)).isDirectory() ? this.walk(path) : { files: [path], skipped: [], ignoredAccessFiles: [] };
  }

  private async document(path: string, access: AccessRules, metadataRules: MetadataRules): Promise<SourceDocument> {
    const info = await stat(path);
    const uri = this.uriOf(path);
    const custom = customFieldsOf(metadataRules.fieldsOf(uri));
    return {
      uri,
      sourceVersion: localSourceVersion(info),
      size: info.size,
      groups: access.groupsOf(uri),
      accessFileMissing: !access.present,
      metadata: { type: fileTypeOf(uri), size: info.size, modifiedAt: epochSecondsOf(info.mtime), meta: custom.meta },
      ...(custom.ignoredKeys.length > 0 ? { ignoredMetaKeys: custom.ignoredKeys } : {}),
      read: () => readFile(path),
    };
  }

  private uriOf(path: string): string {
    return relative(this.root, path).split(sep).join('/');
  }

  /** The files under `folder`; with `rootOnly`, only its access-file look-alikes, wherever `include` points. */
  private async walk(folder: string, { rootOnly = false } = {}): Promise<Walk> {
    const entries = await readdir(folder, { withFileTypes: true });
    const ignoredAccessFiles = entries.filter((entry) => isIgnoredAccessFile(entry.name, folder === this.root)).map((entry) => join(folder, entry.name));
    if (rootOnly) return { files: [], skipped: [], ignoredAccessFiles };
    const nested = await Promise.all(
      entries
        .filter((entry) => !entry.name.startsWith('.') && entry.name !== 'node_modules')
        .map(async (entry): Promise<Walk> => {
          const path = join(folder, entry.name);
          if (entry.isDirectory()) return this.walk(path);
          if (entry.isFile()) return { files: [path], skipped: [], ignoredAccessFiles: [] };
          return { files: [], skipped: [{ uri: this.uriOf(path), reason: entry.isSymbolicLink() ? SYMBOLIC_LINK : NOT_A_FILE }], ignoredAccessFiles: [] };
        }),
    );
    return {
      files: nested.flatMap((walk) => walk.files),
      skipped: nested.flatMap((walk) => walk.skipped),
      ignoredAccessFiles: [...ignoredAccessFiles, ...nested.flatMap((walk) => walk.ignoredAccessFiles)],
    };
  }
}

function ignoredAccessFiles(uris: string[]): RagError {
  return new RagError(
    'RAG_ACCESS_FILE_INVALID',
    `(${uris.join(', ')}: only ${ACCESS_FILE}, exactly so named and at the folder's root, is read; the rules of ${uris.length > 1 ? 'these files' : 'this file'} would not be applied and the documents they mean to restrict would be public. Move the rules into ${ACCESS_FILE} at the root, with paths relative to it, and remove ${uris.length > 1 ? 'these files' : 'this file'})`,
  );
}

function uniqueByUri(entries: SkippedEntry[]): SkippedEntry[] {
  return [...new Map(entries.map((entry) => [entry.uri, entry])).values()].sort((a, b) => a.uri.localeCompare(b.uri));
}

/** A folder file's indexed `source_version`: its modification time and size; GET /documents compares the file it serves with it. */
export function localSourceVersion(info: { mtimeMs: number; size: number }): string {
  return `${info.mtimeMs}:${info.size}`;
}
