import type { DocumentMetadata } from './document-metadata.ts';
import type { SearchFilter } from './search-controls.ts';
import { compileSourceGlob, compileTitlePattern } from './linear-pattern.ts';

/**
 * The filter as a test of one document (the embedded store's; Qdrant gets the same conditions as a payload
 * filter, see qdrant-filter.ts). A field the document lacks never matches a condition on it.
 */
export function documentMatcher(filter: SearchFilter): (source: string, metadata: DocumentMetadata | undefined) => boolean {
  const sourceMatches = sourceGlobMatcher(filter.source);
  const titleMatches = titlePatternMatcher(filter.title);
  return (source, metadata) => {
    if (sourceMatches && !sourceMatches(source)) return false;
    if (filter.sourcesIn && !filter.sourcesIn.includes(source)) return false;
    if (titleMatches && !(metadata?.title !== undefined && titleMatches(metadata.title))) return false;
    if (filter.types && !(metadata && filter.types.includes(metadata.type))) return false;
    if (filter.modifiedAfter !== undefined && !(metadata?.modifiedAt !== undefined && metadata.modifiedAt >= filter.modifiedAfter)) return false;
    if (filter.modifiedBefore !== undefined && !(metadata?.modifiedAt !== undefined && metadata.modifiedAt < filter.modifiedBefore)) return false;
    for (const [key, values] of Object.entries(filter.meta ?? {})) {
      const value = metadata?.meta[key];
      if (value === undefined || !values.includes(value)) return false;
    }
    return true;
  };
}

/** `source` globs (linear-pattern.ts): the same syntax as picomatch's with dotfiles matched, run in linear time. */
export function sourceGlobMatcher(glob: string | undefined): ((source: string) => boolean) | undefined {
  if (glob === undefined) return undefined;
  const pattern = compileSourceGlob(glob);
  return (source) => pattern.matches(source);
}

/**
 * `title` patterns: case-insensitive, `*` any run of characters (slashes included: a title is not a path), `?` one
 * character, everything else literal; the whole title must match ("*runbook*" for one that contains it).
 */
export function titlePatternMatcher(pattern: string | undefined): ((title: string) => boolean) | undefined {
  if (pattern === undefined) return undefined;
  const compiled = compileTitlePattern(pattern);
  return (title) => compiled.matches(title);
}
