import type { RrfParameters } from '@rag/core';
import type { FoldOutcome } from './fusion-tuning.ts';
import type { LadderEntry } from './ladder.ts';
import { objective, type TaskMetrics } from './retrieval-task.ts';

/** Markdown of the ladder (every set × model × mode) and of the fusion tuning behind its last row. */

const fixed = (value: number | undefined) => (value === undefined ? 'n/a' : value.toFixed(3));
const signed = (value: number) => `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(3)}`;
const shortModel = (model: string) => model.replace(/\/+$/, '').replace(/^.*\//, '');

export function describeParameters(parameters: RrfParameters): string {
  return `k ${parameters.k}, dense ${parameters.weights.dense} : sparse ${parameters.weights.sparse}`;
}

/** Published SciFact nDCG@10, to place ours against (sources in the README of ../shared/corpora and the BEIR/MTEB leaderboards). */
const SCIFACT_ANCHORS: Array<[string, string]> = [
  ['BM25 (BEIR paper, Elasticsearch / Pyserini flat)', '0.665–0.679'],
  ['all-MiniLM-L6-v2, dense (MTEB)', '~0.645'],
  ['bge-small-en-v1.5, dense (MTEB)', '0.713'],
  ['BM25 + all-MiniLM-L6-v2, RRF (Qdrant)', '0.718'],
  ['BM25 + bge-base-en-v1.5, RRF', '0.744'],
];

function metricCells(kind: LadderEntry['kind'], metrics: TaskMetrics): string {
  const base = `${fixed(metrics.hitAt1)} | ${fixed(metrics.hitAt5)} | ${fixed(metrics.mrr)}`;
  return kind === 'beir' ? `${base} | ${fixed(metrics.ndcgAt10)} | ${fixed(metrics.recallAt100)}` : base;
}

function setTable(entries: LadderEntry[]): string[] {
  const kind = entries[0]!.kind;
  const header = kind === 'beir' ? '| mode | model | hit@1 | hit@5 | MRR | nDCG@10 | Recall@100 |' : '| mode | model | hit@1 | hit@5 | MRR |';
  const lines = [header, header.replace(/[^|]+/g, ' --- ')];
  const bm25 = entries[0]!.rows.find((row) => row.mode === 'bm25')!;
  lines.push(`| ${bm25.label} | none | ${metricCells(kind, bm25.metrics)} |`);
  for (const mode of ['dense', 'hybrid', 'tuned'] as const) {
    for (const entry of entries) {
      const row = entry.rows.find((candidate) => candidate.mode === mode)!;
      lines.push(`| ${mode === 'dense' ? 'dense only' : row.label} | ${shortModel(entry.model)} | ${metricCells(kind, row.metrics)} |`);
    }
  }
  return lines;
}

function bySet(entries: LadderEntry[]): Map<string, LadderEntry[]> {
  const sets = new Map<string, LadderEntry[]>();
  for (const entry of entries) sets.set(entry.set, [...(sets.get(entry.set) ?? []), entry]);
  return sets;
}

export function ladderMarkdown(entries: LadderEntry[], notes: string | undefined): string {
  const lines = [
    '# Retrieval ladder',
    '',
    'Each set indexed once per dense model in a fresh embedded index (the product\'s chunking, BM25 vectors and LanceDB store, `pnpm eval`\'s in-process mode), then searched through the product\'s Retriever four ways: BM25 alone (no embedder), the dense leg alone (`FUSION_WEIGHTS=dense:1,sparse:0`), both fused by plain RRF (Qdrant\'s k = 2, weights 1: the default), and both fused with RRF parameters chosen by `--tune-fusion` on the other half of the questions (each question is answered with parameters tuned without it; see `fusion-tuning.md`). No reranker: none with real weights runs here, so the seed\'s "+ rerank" rung is not measured.',
    '',
    'Golden sets: in-scope questions only, a hit is the expected passage (source and substring) within the top 10. BEIR: each document indexed whole as one chunk (title as heading + abstract; a dense model reads it up to its maximum length, 256 tokens for MiniLM, as in the published BEIR/MTEB runs), 300 results read per query; hit@k and MRR count the first relevant document.',
    '',
  ];
  for (const [set, setEntries] of bySet(entries)) {
    const first = setEntries[0]!;
    const chunking = first.chunking.size >= 100_000 ? 'whole documents' : `chunks of ${first.chunking.size} characters, ${first.chunking.overlap} overlap`;
    lines.push(`## ${set} (${first.rows[0]!.metrics.queries} ${first.kind === 'beir' ? 'test queries' : 'in-scope questions'}, ${first.chunks} chunks: ${chunking})`, '', ...setTable(setEntries), '');
    if (first.kind === 'beir' && /scifact/i.test(set)) {
      lines.push('Published SciFact nDCG@10 to place these against:', '', '| system | nDCG@10 |', '| --- | --- |', ...SCIFACT_ANCHORS.map(([system, value]) => `| ${system} | ${value} |`), '');
    }
    const broken = setEntries.filter((entry) => !entry.legsReproduceStore);
    if (broken.length > 0) lines.push(`**Warning**: re-fusing the stored legs did not reproduce the store's plain RRF for ${broken.map((entry) => shortModel(entry.model)).join(', ')}: the tuned row may not be what the store would return.`, '');
  }
  lines.push('## Runtime', '', 'On this machine (2 shared cores). Index time includes embedding the passages unless they came from the eval\'s embedding cache (`.cache/eval-embeddings`).', '', '| set | model | chunks | index (s) | passages from cache | every mode, every query (s) |', '| --- | --- | --- | --- | --- | --- |');
  for (const entry of entries) lines.push(`| ${entry.set} | ${shortModel(entry.model)} | ${entry.chunks} | ${entry.indexSeconds.toFixed(1)} | ${entry.cachedEmbeddings} | ${entry.querySeconds.toFixed(1)} |`);
  lines.push('', ...(notes ? ['## Findings', '', notes.trim(), ''] : []));
  return `${lines.join('\n').trimEnd()}\n`;
}

function foldRow(entry: LadderEntry, fold: FoldOutcome): string {
  const plain = objective(entry.kind, fold.heldOutPlain);
  const tuned = objective(entry.kind, fold.heldOutTuned);
  return `| ${entry.set} | ${shortModel(entry.model)} | half ${fold.tunedOn} (${fold.tuningQueries}) | ${describeParameters(fold.chosen)} | ${fixed(fold.tuningObjectivePlain)} → ${fixed(fold.tuningObjective)} | ${fold.heldOutQueries} | ${fixed(plain)} → ${fixed(tuned)} (${signed(tuned - plain)}) | ${fixed(fold.heldOutPlain.hitAt5)} → ${fixed(fold.heldOutTuned.hitAt5)} |`;
}

export function tuningMarkdown(entries: LadderEntry[], notes: string | undefined): string {
  const lines = [
    '# Fusion tuning (`pnpm eval --tune-fusion`)',
    '',
    'For each set and dense model, the questions are split in two halves by a hash of their text (stable, independent of their order in the file). On one half, a grid of RRF parameters is tried — k ∈ {2, 5, 10, 20, 60} × dense:sparse weight ratio ∈ {1/4, 1/3, 1/2, 2/3, 1, 3/2, 2, 3, 4} (the heavier leg weighs the ratio, the other 1), with Qdrant\'s weighted formula 1/((position + 1)/weight + k − 1) — and the best objective (MRR for golden sets, nDCG@10 for BEIR) is kept; plain RRF (k 2, 1:1) stays unless something is strictly better. The choice is then judged on the **other half only**, and the same is done the other way round. "Tuning half" shows the in-sample objective (optimistic); the held-out columns are the honest gain.',
    '',
    '| set | model | tuned on (questions) | chosen | objective on tuning half, plain → chosen | held-out questions | held-out objective, plain → chosen | held-out hit@5 |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const entry of entries) for (const fold of entry.tuning.folds) lines.push(foldRow(entry, fold));
  lines.push('', '## Mean held-out gain, and what each collection would configure', '', '| set | model | objective | mean held-out gain (two folds) | chosen on all questions (in-sample) | its in-sample objective, plain → chosen |', '| --- | --- | --- | --- | --- | --- |');
  for (const entry of entries) {
    const whole = entry.tuning.wholeSet;
    lines.push(`| ${entry.set} | ${shortModel(entry.model)} | ${entry.tuning.objective} | ${signed(entry.tuning.meanHeldOutGain)} | ${describeParameters(whole.parameters)} | ${fixed(whole.objectivePlain)} → ${fixed(whole.objective)} |`);
  }
  lines.push('', ...(notes ? ['## Findings', '', notes.trim(), ''] : []));
  return `${lines.join('\n').trimEnd()}\n`;
}
