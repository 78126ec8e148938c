import { constants } from 'node:fs';
import { open, realpath, stat, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';
import { RagError } from '../errors.ts';
import { localSourceVersion } from '../sources/local-dir.ts';
import type { DocumentLocation, DocumentOrigin } from './document-origin.ts';

/**
 * O_NOFOLLOW: opening a symbolic link fails (ELOOP) instead of opening what it points to; O_NONBLOCK: a FIFO put at
 * the path does not hold the request until a writer comes (it is then refused as not a file). open(2).
 */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * The files of a folder source, named as ingest names them (the path relative to the folder, with `/`).
 * A source must stay inside the folder and name a regular file there without a symbolic link on the way (the
 * ingest skips links, so no indexed document is one): a link, even one pointing inside the folder, would let a
 * public path serve a restricted file. The file is opened first and then checked, and the caller reads that open
 * file, so a path swapped between the check and the read is never followed.
 */
export class FolderDocuments implements DocumentOrigin {
  constructor(private readonly root: string) {}

  async locate(source: string): Promise<DocumentLocation> {
    if (source === '' || source.includes('\0') || isAbsolute(source) || source.split(/[\\/]/).includes('..')) throw notFound(source);
    const root = await realpath(this.root);
    const path = join(root, normalize(source));
    const inside = relative(root, path);
    if (inside === '' || inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside)) throw notFound(source);
    let file: FileHandle;
    try {
      file = await open(path, OPEN_FLAGS);
    } catch {
      throw notFound(source);
    }
    try {
      const opened = await openedRegularFileAt(file, path);
      if (opened === undefined) throw notFound(source);
      return { kind: 'file', path, file, size: opened.size, mtimeMs: opened.mtimeMs, version: localSourceVersion(opened) };
    } catch (error) {
      await file.close();
      throw error;
    }
  }
}

/**
 * The opened file's stat when it is a regular file that `path` still names with no link in any component (the real
 * path is the path itself, and it holds the same inode as the handle); undefined otherwise. A folder on the way swapped
 * for a link before the open and back after it leaves the handle on another inode than the path's: refused.
 */
async function openedRegularFileAt(file: FileHandle, path: string): Promise<{ size: number; mtimeMs: number } | undefined> {
  const opened = await file.stat();
  if (!opened.isFile()) return undefined;
  const [real, atPath] = await Promise.all([realpath(path).catch(() => undefined), stat(path).catch(() => undefined)]);
  if (real !== path || !atPath || atPath.dev !== opened.dev || atPath.ino !== opened.ino) return undefined;
  return opened;
}

function notFound(source: string): RagError {
  return new RagError('RAG_DOCUMENT_NOT_FOUND', `(${source.slice(0, 200)})`);
}
