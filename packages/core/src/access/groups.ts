/**
 * Per-document access groups. A document carries the groups allowed to read it; none means public.
 * A caller sees public documents plus those sharing at least one of its groups, and nothing else.
 */

/** What a caller without groups (no API key, or no RAG_AUTH_FILE) may see: public documents only. */
export const PUBLIC_ONLY: readonly string[] = Object.freeze([]);

/** Trimmed, without blanks or duplicates, sorted: one spelling per set of groups, so sets compare as arrays. */
export function normalizeGroups(groups: Iterable<string>): string[] {
  return [...new Set([...groups].map((group) => group.trim()).filter((group) => group.length > 0))].sort();
}

/** `hr, finance` → ['finance', 'hr'] (a GCS object's `rag-groups` metadata). */
export function parseGroupList(value: string | undefined): string[] {
  return value === undefined ? [] : normalizeGroups(value.split(','));
}

export function sameGroups(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  return a !== undefined && b !== undefined && a.length === b.length && a.every((group, index) => group === b[index]);
}

/** Public (no groups), or restricted to a group the caller holds. */
export function isVisibleTo(documentGroups: readonly string[], callerGroups: ReadonlySet<string>): boolean {
  return documentGroups.length === 0 || documentGroups.some((group) => callerGroups.has(group));
}
