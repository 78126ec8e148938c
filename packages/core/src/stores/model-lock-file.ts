import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ContextLock, EmbeddingModelLock } from '../domain.ts';

/** What an embedded collection records about the model that filled it; `null` model = sparse only. */
export interface RecordedModel {
  model: string | null;
  dimension: number | null;
  /** How chunk contexts were made (CONTEXT_MODE); absent until a writer records it. */
  context?: ContextLock | undefined;
}

export async function readRecordedModel(path: string): Promise<RecordedModel | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as RecordedModel;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

export async function writeRecordedModel(path: string, lock: EmbeddingModelLock | null, context?: ContextLock): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const recorded: RecordedModel = { model: lock?.model ?? null, dimension: lock?.dimension ?? null, ...(context ? { context } : {}) };
  await writeFile(path, `${JSON.stringify(recorded, null, 2)}\n`);
}

export function describeRecorded(recorded: RecordedModel): string {
  return recorded.model === null ? 'no embedding model (sparse only)' : `${recorded.model} (${recorded.dimension} dimensions)`;
}
