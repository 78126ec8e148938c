import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ContextLock, EmbeddingModelLock } from '../domain.ts';
import type { Bm25Language } from '../sparse/languages/bm25-languages.ts';
import { removeAbandonedTemporaries, temporaryPathFor } from './temporary-files.ts';

/** What an embedded collection records about the model that filled it; `null` model = sparse only. */
export interface RecordedModel {
  model: string | null;
  dimension: number | null;
  /** How chunk contexts were made (CONTEXT_MODE); absent until a writer records it. */
  context?: ContextLock | undefined;
  /**
   * Which table this is: a new one each time the table is created, so that a reader holding a view of a
   * collection deleted and built again under the same name can tell (see table-identity.ts). Absent in
   * records written before it existed, until a writer opens the table.
   */
  tableId?: string | undefined;
  /** BM25_LANGUAGE of the sparse vectors (see language-lock.ts); absent in records written before it existed: english. */
  bm25Language?: Bm25Language | undefined;
}

export async function readRecordedModel(path: string): Promise<RecordedModel | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as RecordedModel;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The record for a model lock (null: sparse only). */
export function recordOf(lock: EmbeddingModelLock | null, context: ContextLock | undefined, tableId: string | undefined): RecordedModel {
  return { model: lock?.model ?? null, dimension: lock?.dimension ?? null, ...(context ? { context } : {}), ...(tableId ? { tableId } : {}) };
}

/** Written to a temporary file then renamed: readers checking the table's identity on every query never see half a file. */
export async function writeRecordedModel(path: string, recorded: RecordedModel): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await removeAbandonedTemporaries(path);
  const temporary = temporaryPathFor(path);
  try {
    await writeFile(temporary, `${JSON.stringify(recorded, null, 2)}\n`);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

export function describeRecorded(recorded: RecordedModel): string {
  return recorded.model === null ? 'no embedding model (sparse only)' : `${recorded.model} (${recorded.dimension} dimensions)`;
}
