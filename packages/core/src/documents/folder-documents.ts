import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { RagError } from '../errors.ts';
import type { DocumentLocation, DocumentOrigin } from './document-origin.ts';

/**
 * The files of a folder source, named as ingest names them (the path relative to the folder, with `/`).
 * A source must stay inside the folder however it is spelled (`..`, an absolute path, a symbolic link
 * inside pointing out): the check is made on the real path of the file, after every link is resolved.
 */
export class FolderDocuments implements DocumentOrigin {
  constructor(private readonly root: string) {}

  async locate(source: string): Promise<DocumentLocation> {
    if (source === '' || source.includes('\0') || isAbsolute(source) || source.split(/[\\/]/).includes('..')) throw notFound(source);
    const root = await realpath(this.root);
    let path: string;
    try {
      path = await realpath(resolve(root, source));
    } catch {
      throw notFound(source);
    }
    const inside = relative(root, path);
    if (inside === '' || inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside)) throw notFound(source);
    if (!(await stat(path)).isFile()) throw notFound(source);
    return { kind: 'file', path };
  }
}

function notFound(source: string): RagError {
  return new RagError('RAG_DOCUMENT_NOT_FOUND', `(${source.slice(0, 200)})`);
}
