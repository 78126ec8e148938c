import { createHash } from 'node:crypto';
import type { EvalPassage } from './backend.ts';
import { BEIR_CHUNK_DEPTH, documentRanking } from './beir.ts';
import type { GoldenSet } from './golden-set.ts';
import { firstHitRank, mean, ndcgAtK, rankMetrics, recallAtK, type Qrels } from './metrics.ts';
import { SEARCH_DEPTH } from './backend.ts';

/**
 * One set of judged queries, golden set or BEIR dataset alike, so the ladder and the fusion tuning
 * treat both the same way: each query reads `depth` passages and judges them.
 */
export interface RetrievalTask {
  name: string;
  kind: 'golden' | 'beir';
  /** Passages read per query: what `pnpm eval` reads for this kind of set. */
  depth: number;
  queries: JudgedQuery[];
}

export interface JudgedQuery {
  id: string;
  text: string;
  judge(passages: EvalPassage[]): QueryScore;
}

export interface QueryScore {
  /** 1-based rank of the first hit (golden: the expected passage; BEIR: a relevant document), undefined for none. */
  rank: number | undefined;
  /** BEIR only. */
  ndcgAt10?: number;
  recallAt100?: number;
}

export interface TaskMetrics {
  queries: number;
  hitAt1: number;
  hitAt5: number;
  mrr: number;
  ndcgAt10?: number;
  recallAt100?: number;
}

/** The in-scope questions of a golden set (out-of-scope ones have no rank to tune for). */
export function goldenTask(set: GoldenSet): RetrievalTask {
  const queries = set.questions.flatMap((question): JudgedQuery[] => {
    const expectedSource = question.expectedSource;
    if (expectedSource === undefined) return [];
    const expectation = { expectedSource, expectedSubstring: question.expectedSubstring };
    return [{ id: String(question.number), text: question.question, judge: (passages) => ({ rank: firstHitRank(passages, expectation) }) }];
  });
  return { name: set.name, kind: 'golden', depth: SEARCH_DEPTH, queries };
}

/** BEIR test queries: documents ranked by their best chunk, as `pnpm eval --beir` does. */
export function beirTask(name: string, queries: Map<string, string>, qrels: Map<string, Qrels>): RetrievalTask {
  const judged = [...qrels].map(([id, relevant]): JudgedQuery => {
    const text = queries.get(id);
    if (text === undefined) throw new Error(`qrels name query ${id}, which queries.jsonl does not have`);
    return {
      id,
      text,
      judge: (passages) => {
        const ranked = documentRanking(passages.map((passage) => passage.source));
        const first = ranked.findIndex((documentId) => (relevant.get(documentId) ?? 0) > 0);
        return { rank: first === -1 ? undefined : first + 1, ndcgAt10: ndcgAtK(ranked, relevant, 10), recallAt100: recallAtK(ranked, relevant, 100) };
      },
    };
  });
  return { name, kind: 'beir', depth: BEIR_CHUNK_DEPTH, queries: judged };
}

export function summarize(kind: RetrievalTask['kind'], scores: QueryScore[]): TaskMetrics {
  const ranks = rankMetrics(scores.map((score) => score.rank));
  const base = { queries: ranks.questions, hitAt1: ranks.hitAt1, hitAt5: ranks.hitAt5, mrr: ranks.mrr };
  if (kind === 'golden') return base;
  return { ...base, ndcgAt10: mean(scores.map((score) => score.ndcgAt10 ?? 0)), recallAt100: mean(scores.map((score) => score.recallAt100 ?? 0)) };
}

/** What tuning maximizes: BEIR's headline nDCG@10, a golden set's MRR (rank of the expected passage). */
export function objective(kind: RetrievalTask['kind'], metrics: TaskMetrics): number {
  return kind === 'beir' ? (metrics.ndcgAt10 ?? 0) : metrics.mrr;
}

export const OBJECTIVE_NAME: Record<RetrievalTask['kind'], string> = { golden: 'MRR', beir: 'nDCG@10' };

/**
 * Two halves fixed by a hash of the query's text (not its position: golden sets are grouped by document
 * and kind, so a positional split would tune on one kind of question and test on another). Stable across
 * runs and machines; a question keeps its half when others are added.
 */
export function foldOf(query: Pick<JudgedQuery, 'text'>): 0 | 1 {
  return (createHash('sha256').update(query.text).digest()[0]! & 1) as 0 | 1;
}
