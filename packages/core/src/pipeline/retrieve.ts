import type { SearchHit, SparseVector } from '../domain.ts';
import type { Embedder } from '../embedders/embedder.ts';
import type { RrfParameters } from '../fusion/rrf.ts';
import type { Reranker } from '../rerankers/reranker.ts';
import { encodeQuery } from '../sparse/bm25-encoder.ts';
import type { Bm25Language } from '../sparse/languages/bm25-languages.ts';
import type { VectorStore } from '../stores/vector-store.ts';
import { capPerSource } from '../search-filter/max-per-source.ts';
import type { SearchControls, SearchFilter } from '../search-filter/search-controls.ts';
import type { FreshnessBoost } from '../search-filter/freshness.ts';
import { boostRerankedOrder } from '../fusion/freshness-rescore.ts';
import { timed, type Telemetry } from '../telemetry.ts';
import { isQueryRecorded } from '../tracing/query-recording.ts';
import { inSpan, inSyncSpan, modelCallSpan, SpanKind } from '../tracing/spans.ts';
import { RerankCircuit, type OutageLog, type RerankAdmission } from './rerank-circuit.ts';
import { fuseTopicLeg, TOPIC_FUSION_CANDIDATES, type TopicLeg } from '../conversation/topic-leg.ts';

/** RERANK_FALLBACK: answer from the fused ranking while the reranker is down, or fail with its 503/504. */
export type RerankFallback = 'fused' | 'fail';

export interface RetrieverOptions {
  store: VectorStore;
  embedder?: Embedder | undefined;
  reranker?: Reranker | undefined;
  /** Candidates fetched for the reranker (the seed's RERANK_CANDIDATES, 50). */
  rerankCandidates: number;
  telemetry: Telemetry;
  /** `fused` (default): a reranker outage degrades the ranking; `fail`: it fails the request as before. */
  rerankFallback?: RerankFallback | undefined;
  /** While the reranker is down, one request per interval tries it again (default 5 s); tests shorten it. */
  rerankProbeIntervalMs?: number | undefined;
  /** Where a reranker outage is reported: one warning when it starts, one info line when it ends. */
  logger?: OutageLog | undefined;
  /** How the store fuses the dense and sparse legs (RRF_K, FUSION_WEIGHTS); absent: plain RRF. */
  fusion?: RrfParameters | undefined;
}

/** The passages of one query, and whether their order is the reranker's. */
export interface Retrieval {
  hits: SearchHit[];
  /**
   * True when the reranker ordered and scored the hits; false when they are in the fused order (the
   * reranker is down, or the store returned no more than k candidates, so there was nothing to reorder);
   * undefined when no reranker is configured.
   */
  reranked: boolean | undefined;
}

/** Qdrant needs each prefetch limit ≥ the query limit; 20 keeps fusion meaningful for small k. */
const MIN_PREFETCH = 20;
const DEFAULT_RERANK_PROBE_INTERVAL_MS = 5_000;
/**
 * With max_per_source, the store is asked for this many times k candidates, so that k remain once the cap drops
 * the surplus of the best documents (a document's chunks tend to rank together).
 */
const DIVERSITY_CANDIDATES_PER_RESULT = 5;

/** The query path up to the passages: embed ∥ sparse-encode → hybrid search (RRF) → rerank → top k. */
export class Retriever {
  private readonly rerankProbeIntervalMs: number;
  private readonly rerankCircuit: RerankCircuit;

  constructor(private readonly options: RetrieverOptions) {
    this.rerankProbeIntervalMs = options.rerankProbeIntervalMs ?? DEFAULT_RERANK_PROBE_INTERVAL_MS;
    this.rerankCircuit = new RerankCircuit({ probeIntervalMs: this.rerankProbeIntervalMs, logger: options.logger });
  }

  get reranks(): boolean {
    return this.options.reranker !== undefined;
  }

  /** The collection's BM25 language: what the question's terms are stemmed with, here and when answering. */
  get bm25Language(): Bm25Language | undefined {
    return this.options.store.bm25Language;
  }

  /** The RRF constant this retriever fuses with (undefined: Qdrant's), for what is fused after retrieval. */
  get fusionK(): number | undefined {
    return this.options.fusion?.k;
  }

  async search(query: string, k: number, visibleGroups: readonly string[], signal?: AbortSignal, controls: SearchControls = {}): Promise<SearchHit[]> {
    return (await this.retrieve(query, k, visibleGroups, signal, controls)).hits;
  }

  /**
   * `visibleGroups`: the caller's groups; only public passages and those of these groups are searched
   * (PUBLIC_ONLY for a caller without groups). The store filters while it ranks, so k visible passages
   * come back whenever that many match.
   */
  async retrieve(query: string, k: number, visibleGroups: readonly string[], signal?: AbortSignal, controls: SearchControls = {}, topic?: TopicLeg): Promise<Retrieval> {
    const attributes = { 'gen_ai.operation.name': 'retrieval', 'rag.top_k': k, ...(isQueryRecorded() ? { 'rag.query.text': query } : {}), ...(topic ? { 'rag.follow_up.topic_sources': topic.sources.length } : {}) };
    return inSpan('retrieval', { attributes }, async (span) => {
      const { reranker, telemetry } = this.options;
      const limit = Math.max(reranker ? this.options.rerankCandidates : k, k, controls.maxPerSource ? k * DIVERSITY_CANDIDATES_PER_RESULT : 0);
      const candidates = topic ? await this.searchWithTopicLeg(query, topic, limit, visibleGroups, signal, controls) : await this.searchText(query, limit, visibleGroups, signal, controls);
      const reranked = reranker && candidates.length > k ? await this.rerankOrFallBack(query, candidates, signal) : undefined;
      // The store boosted the fused order; a reranked order gets the same boost over its own ranks.
      const ordered = reranked && controls.freshness ? boostRerankedOrder(reranked, controls.freshness, this.options.fusion?.k) : reranked;
      // The cap applies to the final order (fused or reranked), so each source keeps its best passages.
      const top = capPerSource(ordered ?? candidates, controls.maxPerSource).slice(0, k);
      if (top[0]) telemetry.recordTopScore(top[0].score, reranked !== undefined);
      const retrieval = { hits: top, reranked: reranker ? reranked !== undefined : undefined };
      span.setAttributes({ 'rag.hits': top.length, ...(retrieval.reranked === undefined ? {} : { 'rag.reranked': retrieval.reranked }) });
      return retrieval;
    });
  }

  /** Both legs of one text: embedded and BM25-encoded, then searched in one store call. */
  private async searchText(text: string, limit: number, visibleGroups: readonly string[], signal: AbortSignal | undefined, controls: SearchControls, filter = controls.filter): Promise<SearchHit[]> {
    const [dense, sparse] = await Promise.all([this.embedQuery(text, signal), this.encodeSparse(text)]);
    return this.searchStore(dense, sparse, limit, visibleGroups, signal, filter, controls.freshness);
  }

  /** A follow-up's expanded query and its topic leg (the follow-up's words within the previous search's documents), fused. */
  private async searchWithTopicLeg(query: string, topic: TopicLeg, limit: number, visibleGroups: readonly string[], signal: AbortSignal | undefined, controls: SearchControls): Promise<SearchHit[]> {
    const depth = Math.max(limit, TOPIC_FUSION_CANDIDATES);
    const [expanded, within] = await Promise.all([
      this.searchText(query, depth, visibleGroups, signal, controls),
      // Both legs here too: a follow-up's own words embedded alone still rank its documents' passages (measured
      // with all-MiniLM-L6-v2 on the argo-cd set: hit@5 0.591 hybrid, 0.455 with this leg BM25 only).
      this.searchText(topic.text, depth, visibleGroups, signal, controls, { ...controls.filter, sourcesIn: topic.sources }),
    ]);
    return fuseTopicLeg(expanded, within, this.options.fusion?.k).slice(0, limit);
  }

  /**
   * One store call: Qdrant fuses the dense and sparse legs server-side (RRF over two prefetches), LanceDB in
   * process; the span names the fusion with its constant and counts the fused candidates.
   */
  private searchStore(
    dense: number[] | undefined,
    sparse: SparseVector,
    limit: number,
    visibleGroups: readonly string[],
    signal?: AbortSignal,
    filter?: SearchFilter,
    freshness?: FreshnessBoost,
  ): Promise<SearchHit[]> {
    const { store, telemetry, fusion } = this.options;
    const prefetchLimit = Math.max(limit, MIN_PREFETCH);
    const attributes = {
      'db.system.name': store.name,
      'db.operation.name': 'query',
      'rag.search.legs': dense ? 'dense+sparse' : 'sparse',
      'rag.search.limit': limit,
      'rag.search.prefetch_limit': prefetchLimit,
      'rag.fusion.method': 'rrf',
      ...(fusion ? { 'rag.fusion.k': fusion.k } : {}),
      ...(freshness ? { 'rag.freshness.half_life_s': freshness.halfLifeSeconds, 'rag.freshness.weight': freshness.weight } : {}),
    };
    return inSpan(`query ${store.name}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      const candidates = await timed(
        () => store.search({ dense, sparse, limit, prefetchLimit, visibleGroups, fusion, filter, freshness }, signal),
        (seconds) => telemetry.recordStage('search', seconds),
      );
      span.setAttribute('rag.search.candidates', candidates.length);
      return candidates;
    });
  }

  private async embedQuery(query: string, signal?: AbortSignal): Promise<number[] | undefined> {
    const { embedder, telemetry } = this.options;
    if (!embedder) return undefined;
    const [name, options] = modelCallSpan('embeddings', embedder.modelId, embedder.provider ?? 'local');
    return inSpan(name, options, () =>
      timed(
        () => embedder.embedQuery(query, signal),
        (seconds) => {
          telemetry.recordStage('embed', seconds);
          telemetry.recordModelCall('embeddings', embedder.provider ?? 'local', embedder.modelId, seconds);
        },
      ),
    );
  }

  private async encodeSparse(query: string): Promise<SparseVector> {
    return timed(
      async () =>
        inSyncSpan('bm25 encode', {}, (span) => {
          const sparse = encodeQuery(query, this.options.store.bm25Language);
          span.setAttribute('rag.sparse.terms', sparse.indices.length);
          return sparse;
        }),
      (seconds) => this.options.telemetry.recordStage('sparse', seconds),
    );
  }

  /**
   * The reranked candidates, or undefined to answer from the fused order: the reranker failed, is known
   * to be down (the request does not wait for it), or is being probed and did not answer within one probe
   * interval (the probe goes on without this request). The request's own abort is never a fallback.
   */
  private async rerankOrFallBack(query: string, candidates: SearchHit[], signal?: AbortSignal): Promise<SearchHit[] | undefined> {
    if (this.options.rerankFallback === 'fail') return this.rerank(query, candidates, signal);
    const circuit = this.rerankCircuit;
    const admission = circuit.admit();
    if (admission === 'skip') return this.fallBack(circuit.outageCode!);
    const attempt = this.trackedRerank(admission, query, candidates, signal);
    try {
      const ranked = await (admission === 'probe' ? this.waitForProbe(attempt) : attempt);
      return ranked ?? this.fallBack(circuit.outageCode!);
    } catch (error) {
      if (signal?.aborted) throw error;
      return this.fallBack(circuit.outageCode!);
    }
  }

  /** The rerank call, reporting its outcome to the circuit whether or not the request still waits for it. */
  private trackedRerank(admission: RerankAdmission, query: string, candidates: SearchHit[], signal?: AbortSignal): Promise<SearchHit[]> {
    const circuit = this.rerankCircuit;
    return this.rerank(query, candidates, signal).then(
      (ranked) => {
        circuit.succeeded(admission);
        return ranked;
      },
      (error: unknown) => {
        if (signal?.aborted) circuit.abandoned(admission);
        else circuit.failed(admission, error);
        throw error;
      },
    );
  }

  private async waitForProbe(attempt: Promise<SearchHit[]>): Promise<SearchHit[] | undefined> {
    attempt.catch(() => undefined); // judged by the circuit when this request no longer waits
    let timer: NodeJS.Timeout | undefined;
    const patience = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.rerankProbeIntervalMs).unref();
    });
    try {
      return await Promise.race([attempt, patience]);
    } finally {
      clearTimeout(timer);
    }
  }

  private fallBack(code: string): undefined {
    this.rerankCircuit.countFallback();
    this.options.telemetry.recordRerankFallback(code);
    return undefined;
  }

  private async rerank(query: string, candidates: SearchHit[], signal?: AbortSignal): Promise<SearchHit[]> {
    const reranker = this.options.reranker!;
    const [name, options] = modelCallSpan('rerank', reranker.modelId, reranker.provider ?? 'local', { 'rag.rerank.candidates': candidates.length });
    const scores = await inSpan(name, options, () =>
      timed(
        () => reranker.rerank(query, candidates.map((hit) => hit.text), signal),
        (seconds) => {
          this.options.telemetry.recordStage('rerank', seconds);
          this.options.telemetry.recordModelCall('rerank', reranker.provider ?? 'local', reranker.modelId, seconds);
        },
      ),
    );
    return scores.flatMap(({ index, score }) => {
      const hit = candidates[index];
      return hit ? [{ ...hit, score, fusionScore: hit.fusionScore, reranked: true }] : [];
    });
  }
}
