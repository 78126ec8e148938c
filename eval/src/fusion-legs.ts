import { encodeQuery, fuseHybrid, PUBLIC_ONLY, type Embedder, type RrfParameters, type SearchHit, type VectorStore } from '@rag/core';
import type { EvalPassage } from './backend.ts';
import { toPassage } from './embedded-index.ts';

/** The Retriever's floor for each leg's candidates (packages/core/src/pipeline/retrieve.ts, MIN_PREFETCH). */
const MIN_PREFETCH = 20;

/**
 * The two rankings a hybrid search fuses for one query, each as deep as the Retriever asks the store for
 * (`max(k, 20)` candidates a leg, no reranker): fusing them again with other parameters gives exactly the
 * ranking the store would return with those parameters, without searching again. Tuning tries many.
 */
export class QueryLegs {
  private constructor(
    private readonly dense: string[],
    private readonly sparse: string[],
    private readonly hits: Map<string, SearchHit>,
    private readonly depth: number,
  ) {}

  /**
   * The dense leg is read through the store's own fusion with the sparse leg weighing 0 (only dense
   * candidates score above 0, in dense order); the sparse leg is a sparse-only search of the same depth.
   */
  static async fetch(store: VectorStore, embedder: Embedder, text: string, depth: number): Promise<QueryLegs> {
    const prefetch = Math.max(depth, MIN_PREFETCH);
    const sparseQuery = encodeQuery(text, store.bm25Language);
    const dense = await embedder.embedQuery(text);
    const base = { sparse: sparseQuery, limit: prefetch, prefetchLimit: prefetch, visibleGroups: PUBLIC_ONLY };
    const denseHits = (await store.search({ ...base, dense, fusion: { k: 2, weights: { dense: 1, sparse: 0 } } })).filter((hit) => hit.score > 0);
    const sparseHits = await store.search(base);
    const hits = new Map([...denseHits, ...sparseHits].map((hit) => [hit.id, hit]));
    return new QueryLegs(
      denseHits.map((hit) => hit.id),
      sparseHits.map((hit) => hit.id),
      hits,
      depth,
    );
  }

  /** The top `depth` passages the store returns with these fusion parameters. */
  fused(parameters: RrfParameters): EvalPassage[] {
    return fuseHybrid(this.dense, this.sparse, parameters)
      .slice(0, this.depth)
      .map(({ id, score }) => toPassage({ ...this.hits.get(id)!, score }));
  }
}
