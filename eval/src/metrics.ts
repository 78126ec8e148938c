/** Retrieval metrics, pure functions over ranked results; every one is checked by hand in eval/test. */

export interface RankedPassage {
  source: string;
  text: string;
  score: number;
}

export interface Expectation {
  expectedSource: string;
  expectedSubstring?: string | undefined;
}

/** `docs/x.md` matches `docs/x.md` and `gs://bucket/docs/x.md`, never `mydocs/x.md`. */
export function sourceMatches(actual: string, expected: string): boolean {
  return actual === expected || actual.endsWith(`/${expected.replace(/^\/+/, '')}`);
}

/** The right document and, when the golden set says so, the passage holding the answer (case-insensitive). */
export function isHit(passage: Pick<RankedPassage, 'source' | 'text'>, expectation: Expectation): boolean {
  if (!sourceMatches(passage.source, expectation.expectedSource)) return false;
  const wanted = expectation.expectedSubstring;
  return wanted === undefined || passage.text.toLowerCase().includes(wanted.toLowerCase());
}

/** 1-based rank of the first hit, `undefined` when none of the passages is one. */
export function firstHitRank(passages: Array<Pick<RankedPassage, 'source' | 'text'>>, expectation: Expectation): number | undefined {
  const index = passages.findIndex((passage) => isHit(passage, expectation));
  return index === -1 ? undefined : index + 1;
}

export interface RankMetrics {
  questions: number;
  hitAt1: number;
  hitAt5: number;
  /** Mean reciprocal rank of the first hit within the retrieved depth (0 when absent). */
  mrr: number;
}

/** hit@1, hit@5 and MRR from the first-hit rank of each in-scope question. */
export function rankMetrics(ranks: Array<number | undefined>): RankMetrics {
  const count = ranks.length;
  if (count === 0) return { questions: 0, hitAt1: 0, hitAt5: 0, mrr: 0 };
  const share = (keep: (rank: number) => boolean) => ranks.filter((rank) => rank !== undefined && keep(rank)).length / count;
  const reciprocal = ranks.reduce<number>((sum, rank) => sum + (rank === undefined ? 0 : 1 / rank), 0);
  return { questions: count, hitAt1: share((rank) => rank <= 1), hitAt5: share((rank) => rank <= 5), mrr: reciprocal / count };
}

/**
 * Area under the ROC curve of "top score says in scope": the probability that a random in-scope
 * question scores above a random out-of-scope one, ties counting half. 1 separates perfectly, 0.5 is
 * chance. `undefined` when either side is empty.
 */
export function auroc(inScope: number[], outOfScope: number[]): number | undefined {
  if (inScope.length === 0 || outOfScope.length === 0) return undefined;
  let wins = 0;
  for (const positive of inScope) {
    for (const negative of outOfScope) wins += positive > negative ? 1 : positive === negative ? 0.5 : 0;
  }
  return wins / (inScope.length * outOfScope.length);
}

/** How many scores a `score >= threshold` rule refuses (the Answerer's RAG_MIN_SCORE test). */
export function countBelow(scores: number[], threshold: number): number {
  return scores.filter((score) => !(score >= threshold)).length;
}

/** Graded relevance of one query: document id → grade (> 0 relevant), as in BEIR's qrels. */
export type Qrels = Map<string, number>;

/** nDCG@k with trec_eval's linear gain and log2(rank + 1) discount (what BEIR's pytrec_eval reports). */
export function ndcgAtK(ranked: string[], qrels: Qrels, k: number): number {
  const gains = [...qrels.values()].filter((grade) => grade > 0).sort((a, b) => b - a);
  const ideal = gains.slice(0, k).reduce((sum, grade, index) => sum + grade / Math.log2(index + 2), 0);
  if (ideal === 0) return 0;
  const seen = new Set<string>();
  let dcg = 0;
  ranked.slice(0, k).forEach((id, index) => {
    if (seen.has(id)) return;
    seen.add(id);
    dcg += Math.max(qrels.get(id) ?? 0, 0) / Math.log2(index + 2);
  });
  return dcg / ideal;
}

/** Share of the relevant documents found in the top k. */
export function recallAtK(ranked: string[], qrels: Qrels, k: number): number {
  const relevant = [...qrels].filter(([, grade]) => grade > 0).map(([id]) => id);
  if (relevant.length === 0) return 0;
  const top = new Set(ranked.slice(0, k));
  return relevant.filter((id) => top.has(id)).length / relevant.length;
}

export function mean(values: number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}
