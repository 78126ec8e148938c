import { resolve } from 'node:path';
import type { Config, Logger } from '@rag/core';
import type { EvalBackend, EvalPassage } from './backend.ts';
import { EmbeddedIndex } from './embedded-index.ts';
import { loadGoldenSet, type GoldenSet } from './golden-set.ts';
import { runGoldenSet, type GoldenResult } from './runner.ts';

/**
 * The lever ladder (issue 40): each rung is a set of settings the product reads (CHUNK_MIN_CHARS, EMBED_MODEL, …),
 * each set is indexed afresh per rung and every question asked once, through the product's own pipeline.
 * Besides the ranking per question kind and page level, each cell records what the rung costs: the seconds
 * to index the set and the median time of one search, on this machine.
 */

export interface Rung {
  name: string;
  /** What the rung changes, for the report. */
  description: string;
  settings: Partial<Config>;
}

export interface LeverCell {
  rung: string;
  set: string;
  chunks: number;
  indexSeconds: number;
  searchP50Ms: number;
  result: Omit<GoldenResult, 'questions'> & { ranks: Array<number | null> };
}

/** Times every search it forwards, so the cell's p50 is the product's search alone. */
class TimedBackend implements EvalBackend {
  readonly durations: number[] = [];
  constructor(private readonly inner: EvalBackend) {}
  get description(): string {
    return this.inner.description;
  }
  async search(query: string, k: number): Promise<EvalPassage[]> {
    const started = performance.now();
    const passages = await this.inner.search(query, k);
    this.durations.push(performance.now() - started);
    return passages;
  }
  chat(): never {
    throw new Error('the lever ladder measures retrieval only');
  }
  async close(): Promise<void> {
    await this.inner.close();
  }
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length === 0 ? 0 : sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export async function loadSets(files: readonly string[], repositoryRoot: string): Promise<GoldenSet[]> {
  const sets: GoldenSet[] = [];
  for (const file of files) {
    const set = await loadGoldenSet(resolve(file), repositoryRoot);
    set.file = file;
    if (!set.corpus) throw new Error(`${file} names no corpus: the lever ladder indexes it in process`);
    sets.push(set);
  }
  return sets;
}

export async function runCell(rung: Rung, set: GoldenSet, baseConfig: Config, logger: Logger): Promise<LeverCell> {
  const config = { ...baseConfig, ...rung.settings, RERANK_URL: undefined, RERANK_MODEL: undefined };
  const index = await EmbeddedIndex.open(config, logger);
  const backend = new TimedBackend(index);
  try {
    const started = performance.now();
    const { chunks } = await index.ingestFolder(set.corpus!);
    const indexSeconds = (performance.now() - started) / 1000;
    const { questions, ...result } = await runGoldenSet(set, backend, { minHit5: 0, minMrr: 0 }, config.RAG_MIN_SCORE);
    const ranks = questions.filter((outcome) => outcome.expectedSource !== undefined).map((outcome) => outcome.rank ?? null);
    return { rung: rung.name, set: set.name, chunks, indexSeconds, searchP50Ms: median(backend.durations), result: { ...result, ranks } };
  } finally {
    await backend.close();
  }
}
