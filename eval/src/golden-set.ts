import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { BM25_LANGUAGES, type Bm25Language } from '@rag/core';
import { parse } from 'yaml';
import { z, type ZodIssue } from 'zod';

/**
 * A golden set: `questions: [{question, expected_source, expected_substring?}]` (the seed's format,
 * `expected_source: none` for out-of-scope, optional `kind` to group them in the report), plus an optional `corpus` telling the in-process mode
 * what to ingest: a folder relative to the repository root, or `{path, include}`, and the `bm25_language` its
 * documents are written in (BM25_LANGUAGE for the in-process index; an explicit BM25_LANGUAGE still wins).
 */
const nonEmpty = z.string().trim().min(1, 'must be a non-empty string');

const questionSchema = z
  .object({
    question: nonEmpty,
    expected_source: nonEmpty,
    expected_substring: nonEmpty.optional(),
    kind: nonEmpty.optional(),
    /** Facts a correct answer states: each a phrase, or alternatives joined by " | ", matched case-insensitively. */
    key_facts: z.array(nonEmpty).min(1).optional(),
  })
  .strict();

const corpusSchema = z.union([
  nonEmpty.transform((path) => ({ path, include: undefined as string[] | undefined })),
  z.object({ path: nonEmpty, include: z.array(nonEmpty).min(1).optional() }).strict(),
]);

const fraction = z.number().min(0).max(1);

/** A set may set its own gate, with the reason written next to it; --min-hit5/--min-mrr still win. */
const gateSchema = z
  .object({ min_hit5: fraction.optional(), min_mrr: fraction.optional(), why: nonEmpty })
  .strict()
  .transform((gate) => ({ minHit5: gate.min_hit5, minMrr: gate.min_mrr, why: gate.why }));

/** A set may gate its answer evaluation (`pnpm eval --answers`) on the deterministic answer checks, with the reason. */
const answerGateSchema = z
  .object({
    min_citation_precision: fraction.optional(),
    min_citation_recall: fraction.optional(),
    max_unsupported_rate: fraction.optional(),
    min_out_of_scope_declined: fraction.optional(),
    min_key_facts: fraction.optional(),
    why: nonEmpty,
  })
  .strict()
  .transform((gate) => ({
    minCitationPrecision: gate.min_citation_precision,
    minCitationRecall: gate.min_citation_recall,
    maxUnsupportedRate: gate.max_unsupported_rate,
    minOutOfScopeDeclined: gate.min_out_of_scope_declined,
    minKeyFacts: gate.min_key_facts,
    why: gate.why,
  }));

const goldenSchema = z
  .object({
    corpus: corpusSchema.optional(),
    bm25_language: z.enum(BM25_LANGUAGES).optional(),
    gate: gateSchema.optional(),
    /** The gate of a run with a dense model (EMBED_MODEL or EMBED_URL): hybrid search must stay above BM25's level. */
    hybrid_gate: gateSchema.optional(),
    answer_gate: answerGateSchema.optional(),
    questions: z.array(questionSchema).min(1, 'needs at least one question'),
  })
  .strict();

export const OUT_OF_SCOPE = 'none';

export interface GoldenQuestion {
  /** 1-based position in the file, as error messages and reports name it. */
  number: number;
  question: string;
  /** `undefined` for an out-of-scope question (`expected_source: none`). */
  expectedSource: string | undefined;
  expectedSubstring: string | undefined;
  /** Optional label (e.g. paraphrase, identifier, out-of-scope) the report breaks the metrics down by. */
  kind: string | undefined;
  /** What a correct answer must state (key_facts); each entry lists its alternatives. */
  keyFacts: string[][] | undefined;
}

export interface GoldenCorpus {
  /** Absolute folder. */
  root: string;
  include: string[] | undefined;
}

export interface GoldenSetGate {
  minHit5: number | undefined;
  minMrr: number | undefined;
  why: string;
}

export interface GoldenSet {
  name: string;
  file: string;
  corpus: GoldenCorpus | undefined;
  /** The language the set's corpus and questions are written in; undefined: the configured BM25_LANGUAGE. */
  bm25Language: Bm25Language | undefined;
  gate: GoldenSetGate | undefined;
  hybridGate: GoldenSetGate | undefined;
  answerGate: AnswerGate | undefined;
  questions: GoldenQuestion[];
}

export type AnswerGate = z.output<typeof answerGateSchema>;

export class GoldenSetError extends Error {
  constructor(file: string, problems: string[]) {
    super(`Invalid golden set ${file}:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'GoldenSetError';
  }
}

/** `questions.3.expected_source` → `question 4 (expected_source)`: people count from 1. */
function describeIssue(issue: ZodIssue): string {
  const [first, index, ...rest] = issue.path;
  if (first === 'questions' && typeof index === 'number') {
    const field = rest.length > 0 ? ` (${rest.join('.')})` : '';
    return `question ${index + 1}${field}: ${issue.message}`;
  }
  return `${issue.path.length > 0 ? issue.path.join('.') : 'file'}: ${issue.message}`;
}

/** Parses and validates a golden set's text; `repositoryRoot` anchors a relative `corpus` path. */
export function parseGoldenSet(text: string, file: string, repositoryRoot: string): GoldenSet {
  let data: unknown;
  try {
    data = parse(text);
  } catch (error) {
    throw new GoldenSetError(file, [`not valid YAML: ${(error as Error).message}`]);
  }
  const parsed = goldenSchema.safeParse(data);
  if (!parsed.success) throw new GoldenSetError(file, parsed.error.issues.map(describeIssue));
  const { corpus, bm25_language: bm25Language, gate, hybrid_gate: hybridGate, answer_gate: answerGate, questions } = parsed.data;
  const problems = questions.flatMap((entry, index) =>
    entry.expected_source === OUT_OF_SCOPE && entry.expected_substring
      ? [`question ${index + 1} (expected_substring): an out-of-scope question (expected_source: none) cannot expect a substring`]
      : [],
  );
  if (problems.length > 0) throw new GoldenSetError(file, problems);
  return {
    name: file.replace(/^.*\//, '').replace(/\.ya?ml$/, ''),
    file,
    corpus: corpus ? { root: isAbsolute(corpus.path) ? corpus.path : resolve(repositoryRoot, corpus.path), include: corpus.include } : undefined,
    bm25Language,
    gate,
    hybridGate,
    answerGate,
    questions: questions.map((entry, index) => ({
      number: index + 1,
      question: entry.question,
      expectedSource: entry.expected_source === OUT_OF_SCOPE ? undefined : entry.expected_source,
      expectedSubstring: entry.expected_substring,
      kind: entry.kind,
      keyFacts: entry.key_facts?.map((fact) => fact.split(' | ').map((alternative) => alternative.trim()).filter((alternative) => alternative !== '')),
    })),
  };
}

export async function loadGoldenSet(file: string, repositoryRoot: string): Promise<GoldenSet> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new GoldenSetError(file, [`cannot be read: ${(error as Error).message}`]);
  }
  return parseGoldenSet(text, file, repositoryRoot);
}
