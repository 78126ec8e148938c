import type { SearchHit } from '../domain.ts';

export interface Citation {
  source: string;
  headingPath: string;
  chunkIndex: number;
  score: number;
  /** The pages or slides the passage lies on (see Chunk.pages); absent for a document without pages. */
  pages?: readonly number[] | undefined;
}

/**
 * The page fields of a result or citation in every interface (docs/api.md): `page`, 1-based, where the
 * passage starts, and `pages`, every page it touches, only when there are several; neither without pages.
 */
export function pageFields(pages: readonly number[] | undefined): { page?: number; pages?: number[] } {
  const [first] = pages ?? [];
  if (first === undefined) return {};
  return pages!.length > 1 ? { page: first, pages: [...pages!] } : { page: first };
}

/** How answers and the API name a passage: `source#chunk_index`. */
export function passageLabel(hit: Pick<SearchHit, 'source' | 'chunkIndex'>): string {
  return `${hit.source}#${hit.chunkIndex}`;
}

/**
 * How the prompt names the passage at `position` (0-based) among those given: `P1`, `P2`… A source
 * name is document data (anyone who can write a file chooses it), so it never stands on a fence line;
 * the server maps these labels back to `source#chunk_index` (prompt.ts, answer-check/verified-stream.ts).
 */
export function promptLabel(position: number): string {
  return `P${position + 1}`;
}

export function toCitation(hit: SearchHit): Citation {
  return { source: hit.source, headingPath: hit.headingPath, chunkIndex: hit.chunkIndex, score: hit.score, ...(hit.pages?.length ? { pages: hit.pages } : {}) };
}

/** A label inside a citation bracket, and where it stands in the text (`end` exclusive). */
export interface LabelInText {
  label: string;
  start: number;
  end: number;
}

/** A bracket that may hold citations: one line, no nested brackets, bounded so a stream can wait for its end. */
export const MAX_BRACKET_CONTENT = 300;
const BRACKET = new RegExp(`\\[([^\\[\\]\\n]{1,${MAX_BRACKET_CONTENT}})\\]`, 'g');
const ORDINAL = /^P\d+(?=\s*(?:[,;]|$))/;
/** Where a `source#n` label may end: after `#digits`, before a separator or the bracket's end. */
const LABEL_END = /#\d+(?=\s*(?:[,;]|$))/g;
const SEPARATOR = /^\s*[,;]\s*/;

/**
 * The next label at the start of `rest`: the longest known label first, so a source whose name holds
 * a comma (`[a, b.md#0]`) is read whole; else a prompt label; else the shortest `…#n`, so that
 * `[x.md#1, y.md#2]` is two labels.
 */
function nextLabel(rest: string, isKnown: (label: string) => boolean): string | undefined {
  const candidates = [...rest.matchAll(LABEL_END)].map((end) => rest.slice(0, end.index + end[0].length));
  const known = candidates.filter(isKnown).at(-1);
  return known ?? ORDINAL.exec(rest)?.[0] ?? candidates[0];
}

/** The labels of a bracket's content, or undefined when it is not a list of labels (`[a link]`, `[1]`). */
function labelsOfBracket(content: string, contentStart: number, isKnown: (label: string) => boolean): LabelInText[] | undefined {
  const labels: LabelInText[] = [];
  let position = content.length - content.trimStart().length;
  while (position < content.length) {
    const label = nextLabel(content.slice(position), isKnown);
    if (label === undefined) return undefined;
    labels.push({ label, start: contentStart + position, end: contentStart + position + label.length });
    position += label.length;
    const separator = SEPARATOR.exec(content.slice(position));
    position += separator ? separator[0].length : content.length - position;
  }
  return labels.length > 0 ? labels : undefined;
}

/** Every label in `[…]` citation brackets of `text`, in order; `[a#1, b#2]` holds two. */
export function labelsInText(text: string, isKnown: (label: string) => boolean = () => false): LabelInText[] {
  return [...text.matchAll(BRACKET)].flatMap((bracket) => labelsOfBracket(bracket[1]!, bracket.index + 1, isKnown) ?? []);
}

/** The distinct labels an answer cites, in order of first appearance. */
export function citedLabels(answer: string, isKnown?: (label: string) => boolean): string[] {
  return [...new Set(labelsInText(answer, isKnown).map(({ label }) => label))];
}

/** The passages given, by each label that names one: its prompt label (`P2`) and its `source#n`. */
export function passagesByLabel(passages: readonly SearchHit[]): Map<string, SearchHit> {
  const byLabel = new Map<string, SearchHit>();
  passages.forEach((hit, position) => {
    byLabel.set(promptLabel(position), hit);
    byLabel.set(passageLabel(hit), hit);
  });
  return byLabel;
}

/** `text` with each prompt label that names a passage given written as that passage's `source#n`. */
export function rewritePromptLabels(text: string, byLabel: ReadonlyMap<string, SearchHit>): string {
  let rewritten = '';
  let copied = 0;
  for (const { label, start, end } of labelsInText(text, (candidate) => byLabel.has(candidate))) {
    const hit = byLabel.get(label);
    if (!hit || !ORDINAL.test(label)) continue;
    rewritten += text.slice(copied, start) + passageLabel(hit);
    copied = end;
  }
  return rewritten + text.slice(copied);
}

/**
 * Splits the answer's citations into the passages it cites (by prompt label or by `source#n`) and
 * labels that match no passage given (a model inventing a source); the latter are reported, never
 * shown as sources.
 */
export function resolveCitations(answer: string, passages: readonly SearchHit[]): { citations: Citation[]; unknownCitations: string[] } {
  const byLabel = passagesByLabel(passages);
  const cited = new Set<SearchHit>();
  const unknownCitations: string[] = [];
  for (const label of citedLabels(answer, (candidate) => byLabel.has(candidate))) {
    const hit = byLabel.get(label);
    if (hit) cited.add(hit);
    else unknownCitations.push(label);
  }
  return { citations: [...cited].map(toCitation), unknownCitations };
}
