import { fileURLToPath } from 'node:url';
import { DEFAULT_RRF, type Config, type Logger, type RrfParameters } from '@rag/core';
import type { EvalBackend } from './backend.ts';
import { describeFusion, EmbeddedIndex } from './embedded-index.ts';
import { CachedEmbedder } from './embedding-cache.ts';
import { QueryLegs } from './fusion-legs.ts';
import { metricsWith, tuneFusion, type LegsOfQuery, type TuningOutcome } from './fusion-tuning.ts';
import { objective, summarize, type JudgedQuery, type RetrievalTask, type TaskMetrics } from './retrieval-task.ts';

/**
 * The retrieval ladder of one set with one dense model: BM25 alone, the dense leg alone, both fused by
 * plain RRF, and both fused with parameters tuned on the other half of the questions. Every row is
 * measured through the product's Retriever over the same index; tuning alone re-fuses stored legs.
 */

export type LadderMode = 'bm25' | 'dense' | 'hybrid' | 'tuned';

export interface LadderRow {
  mode: LadderMode;
  label: string;
  metrics: TaskMetrics;
}

export interface LadderEntry {
  set: string;
  kind: RetrievalTask['kind'];
  model: string;
  chunks: number;
  /** CHUNK_SIZE / CHUNK_OVERLAP the set was indexed with. */
  chunking: { size: number; overlap: number };
  indexSeconds: number;
  /** Seconds to search every query once in every mode (legs for tuning included). */
  querySeconds: number;
  /** Passage embeddings read from the eval's cache rather than computed (indexSeconds is then not the model's cost). */
  cachedEmbeddings: number;
  rows: LadderRow[];
  tuning: Omit<TuningOutcome, 'parametersFor'>;
  /** False when re-fusing the stored legs did not reproduce the store's own plain RRF ranking (a bug to look at). */
  legsReproduceStore: boolean;
}

/** The dense leg alone: the sparse one weighs 0 (FUSION_WEIGHTS=dense:1,sparse:0). */
export const DENSE_ONLY: RrfParameters = { k: DEFAULT_RRF.k, weights: { dense: 1, sparse: 0 } };

export interface LadderTarget {
  task: RetrievalTask;
  /** Settings this set is indexed with, over the environment's (BEIR: whole documents). */
  config?: Partial<Config>;
  /** Fills a fresh index; returns its chunk count. */
  fill(index: EmbeddedIndex): Promise<number>;
}

async function judgeAll(backend: EvalBackend, task: RetrievalTask, queries: JudgedQuery[] = task.queries): Promise<TaskMetrics> {
  const scores = [];
  for (const query of queries) scores.push(query.judge(await backend.search(query.text, task.depth)));
  return summarize(task.kind, scores);
}

async function crossFitted(index: EmbeddedIndex, task: RetrievalTask, tuning: TuningOutcome): Promise<TaskMetrics> {
  const views = new Map<RrfParameters, EvalBackend>();
  const scores = [];
  for (const query of task.queries) {
    const parameters = tuning.parametersFor(query);
    let view = views.get(parameters);
    if (!view) views.set(parameters, (view = index.view({ label: describeFusion(parameters), fusion: parameters })));
    scores.push(query.judge(await view.search(query.text, task.depth)));
  }
  return summarize(task.kind, scores);
}

/** Where the ladder keeps passage embeddings between runs (git-ignored, like every .cache). */
export const EMBEDDING_CACHE = fileURLToPath(new URL('../../.cache/eval-embeddings', import.meta.url));

export async function runLadder(target: LadderTarget, model: string, baseConfig: Config, logger: Logger, embeddingCache: string | undefined = EMBEDDING_CACHE): Promise<LadderEntry> {
  const { task } = target;
  // A URL is an embedding server (TEI, llama-server: EMBED_URL, its model and EMBED_*_PREFIX from the environment); anything else a local model.
  const remote = /^https?:\/\//.test(model);
  const config = { ...baseConfig, ...target.config, EMBED_MODEL: remote ? baseConfig.EMBED_MODEL : model, EMBED_URL: remote ? model : undefined, RERANK_URL: undefined, RERANK_MODEL: undefined };
  const index = await EmbeddedIndex.open(config, logger, { embeddingCache });
  try {
    if (!index.embedder) throw new Error(`the model ${model} gave no embedder`);
    const modelName = remote ? (await index.embedder.describe()).model : model;
    const indexStarted = performance.now();
    const chunks = await target.fill(index);
    const indexSeconds = (performance.now() - indexStarted) / 1000;
    const queryStarted = performance.now();
    const legs: LegsOfQuery[] = [];
    for (const query of task.queries) legs.push({ query, legs: await QueryLegs.fetch(index.store, index.embedder, query.text, task.depth) });
    const tuning = tuneFusion(task, legs);
    const hybrid = await judgeAll(index.view({ label: 'RRF', fusion: DEFAULT_RRF }), task);
    const rows: LadderRow[] = [
      { mode: 'bm25', label: 'BM25 (sparse only)', metrics: await judgeAll(index.view({ label: 'BM25', sparseOnly: true }), task) },
      { mode: 'dense', label: `dense only (${modelName.replace(/^.*\//, '')})`, metrics: await judgeAll(index.view({ label: 'dense', fusion: DENSE_ONLY }), task) },
      { mode: 'hybrid', label: 'hybrid, RRF k 2 (default)', metrics: hybrid },
      { mode: 'tuned', label: 'hybrid, tuned RRF (each half tuned on the other)', metrics: await crossFitted(index, task, tuning) },
    ];
    const querySeconds = (performance.now() - queryStarted) / 1000;
    const reFused = metricsWith(task, legs, DEFAULT_RRF);
    const { parametersFor: _, ...tuningReport } = tuning;
    return {
      set: task.name,
      kind: task.kind,
      model: modelName,
      chunks,
      chunking: { size: config.CHUNK_SIZE, overlap: config.CHUNK_OVERLAP },
      indexSeconds,
      querySeconds,
      cachedEmbeddings: index.embedder instanceof CachedEmbedder ? index.embedder.counts.cached : 0,
      rows,
      tuning: tuningReport,
      legsReproduceStore: Math.abs(objective(task.kind, reFused) - objective(task.kind, hybrid)) < 1e-9 && reFused.hitAt5 === hybrid.hitAt5,
    };
  } finally {
    await index.close();
  }
}
