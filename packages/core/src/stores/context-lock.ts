import type { ContextLock } from '../domain.ts';
import { RagError } from '../errors.ts';

/** A collection that records no context mode and already holds points was filled before contexts existed. */
export const UNRECORDED_NON_EMPTY: ContextLock = { mode: 'off', promptVersion: null };

export function describeContext(lock: ContextLock): string {
  return lock.mode === 'off' ? 'CONTEXT_MODE=off' : `CONTEXT_MODE=${lock.mode} (${lock.promptVersion})`;
}

/** Throws RAG_CONTEXT_MISMATCH when the collection's recorded context differs from the writer's. */
export function assertSameContext(collection: string, recorded: ContextLock, wanted: ContextLock): void {
  if (recorded.mode === wanted.mode && recorded.promptVersion === wanted.promptVersion) return;
  throw new RagError('RAG_CONTEXT_MISMATCH', `(Collection "${collection}" was indexed with ${describeContext(recorded)}; configured: ${describeContext(wanted)}.)`);
}
