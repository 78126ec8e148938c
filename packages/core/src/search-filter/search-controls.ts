import { z } from 'zod';
import { RagError } from '../errors.ts';
import { CUSTOM_FIELD_KEY } from './custom-metadata-keys.ts';
import { compileSourceGlob, isMatchAllGlob } from './linear-pattern.ts';
import { freshnessSchema, toFreshnessBoost, type FreshnessBoost } from './freshness.ts';

/**
 * The search controls every interface takes (/search, /chat, /v1/chat/completions, the MCP tools):
 *
 * ```json
 * "filter": {"source": "docs/operator-manual/**", "title": "*rollback*", "type": ["md", "pdf"], "modified_after": "2026-01-01T00:00:00Z",
 *            "modified_before": "2026-06-01T00:00:00Z", "meta": {"team": "platform", "tier": ["gold", "silver"]}},
 * "max_per_source": 2
 * ```
 *
 * Every field is optional and they AND; a list matches any of its values. `source` is a glob over the
 * source path (picomatch's syntax, `**` crosses folders, `**` alone is no filter; run by a linear-time engine, linear-pattern.ts); `title` a case-insensitive pattern over the document's title. Dates are RFC 3339; after is inclusive, before exclusive.
 */
const oneOrMany = z.union([z.string().min(1).max(200), z.array(z.string().min(1).max(200)).min(1).max(50)]);
const dateTime = z.string().datetime({ offset: true });

export const searchFilterSchema = z
  .object({
    source: z.string().min(1).max(500).refine(isValidSourceGlob, 'not a valid glob').optional().describe('glob over the source path, e.g. "docs/operator-manual/**"'),
    title: z.string().min(1).max(300).optional().describe('pattern over the document title, case-insensitive: * any characters, ? one, e.g. "*runbook*"'),
    type: oneOrMany.optional().describe('file type(s): the extension without the dot, e.g. ["md", "pdf"]'),
    modified_after: dateTime.optional().describe('RFC 3339: documents modified at or after this time'),
    modified_before: dateTime.optional().describe('RFC 3339: documents modified before this time'),
    meta: z
      // Keys are payload paths in Qdrant (`meta.<key>`): a dot or bracket would address something else.
      .record(z.string().regex(CUSTOM_FIELD_KEY, 'a meta key is letters, digits, _ and -'), oneOrMany)
      .refine((meta) => Object.keys(meta).length <= 20, 'at most 20 keys')
      .optional()
      .describe('custom fields (.rag-metadata.yaml, GCS custom metadata): key → value or any of values'),
  })
  .strict();

export const maxPerSourceSchema = z.number().int().min(1).max(50).describe('at most this many results from one source (1: every result from a different document)');

export type SearchFilterInput = z.infer<typeof searchFilterSchema>;

/** The parsed filter: lists everywhere, times as epoch seconds. */
export interface SearchFilter {
  source?: string | undefined;
  title?: string | undefined;
  types?: readonly string[] | undefined;
  modifiedAfter?: number | undefined;
  modifiedBefore?: number | undefined;
  meta?: Readonly<Record<string, readonly string[]>> | undefined;
  /** Exactly these sources (a follow-up's topic leg, conversation/topic-leg.ts); never set by a request. */
  sourcesIn?: readonly string[] | undefined;
}

export interface SearchControls {
  filter?: SearchFilter | undefined;
  maxPerSource?: number | undefined;
  /** The recency boost (freshness.ts); absent: off. */
  freshness?: FreshnessBoost | undefined;
}

/**
 * The controls of a request body's `filter`, `max_per_source` and `freshness`; a malformed one is a 400 naming
 * the field (RAG_INVALID_FILTER, RAG_INVALID_MAX_PER_SOURCE, RAG_INVALID_FRESHNESS).
 */
export function parseSearchControls(fields: Record<string, unknown>): SearchControls {
  const controls: SearchControls = {};
  if (fields['filter'] !== undefined && fields['filter'] !== null) {
    const parsed = searchFilterSchema.safeParse(fields['filter']);
    if (!parsed.success) {
      throw new RagError('RAG_INVALID_FILTER', `${issueText('filter', parsed.error.issues[0]!)}.`);
    }
    controls.filter = toSearchFilter(parsed.data);
  }
  if (fields['max_per_source'] !== undefined && fields['max_per_source'] !== null) {
    const parsed = maxPerSourceSchema.safeParse(fields['max_per_source']);
    if (!parsed.success) throw new RagError('RAG_INVALID_MAX_PER_SOURCE');
    controls.maxPerSource = parsed.data;
  }
  if (fields['freshness'] !== undefined && fields['freshness'] !== null) {
    const parsed = freshnessSchema.safeParse(fields['freshness']);
    if (!parsed.success) throw new RagError('RAG_INVALID_FRESHNESS', `(${issueText('freshness', parsed.error.issues[0]!)})`);
    controls.freshness = toFreshnessBoost(parsed.data);
  }
  return controls;
}

/** `"filter.meta.team": Expected string (unknown: x)`: the field at fault, then zod's reason. */
function issueText(field: string, issue: z.ZodIssue): string {
  const unknownKeys = issue.code === 'unrecognized_keys' ? ` (unknown: ${issue.keys.join(', ')})` : '';
  return `"${field}${issue.path.map((part) => `.${part}`).join('')}": ${issue.message}${unknownKeys}`;
}

export function toSearchFilter(input: SearchFilterInput): SearchFilter {
  const list = (value: string | string[] | undefined) => (value === undefined ? undefined : typeof value === 'string' ? [value] : value);
  const seconds = (time: string | undefined) => (time === undefined ? undefined : Math.floor(Date.parse(time) / 1000));
  return {
    // `**` lets every source through: no source condition at all, rather than one listing every indexed source.
    source: input.source === undefined || isMatchAllGlob(input.source) ? undefined : input.source,
    title: input.title,
    types: list(input.type)?.map((type) => type.replace(/^\./, '').toLowerCase()),
    modifiedAfter: seconds(input.modified_after),
    modifiedBefore: seconds(input.modified_before),
    meta: input.meta && Object.fromEntries(Object.entries(input.meta).map(([key, value]) => [key, list(value)!])),
  };
}

function isValidSourceGlob(glob: string): boolean {
  try {
    compileSourceGlob(glob);
    return true;
  } catch {
    return false;
  }
}

/** Whether the filter restricts anything at all. */
export function isEmptyFilter(filter: SearchFilter | undefined): boolean {
  return (
    !filter ||
    (filter.source === undefined &&
      filter.sourcesIn === undefined &&
      filter.title === undefined &&
      filter.types === undefined && filter.modifiedAfter === undefined && filter.modifiedBefore === undefined && (filter.meta === undefined || Object.keys(filter.meta).length === 0))
  );
}
