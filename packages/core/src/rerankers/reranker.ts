export interface RerankScore {
  /** Position of the text in the list given to `rerank`. */
  index: number;
  score: number;
}

/** Scores (query, passage) pairs jointly; returns one score per text, best first. */
export interface Reranker {
  readonly modelId: string;
  /** Who runs the model, for the gen_ai.provider.name metric attribute (tei, onnxruntime, …). */
  readonly provider?: string;
  rerank(query: string, texts: string[], signal?: AbortSignal): Promise<RerankScore[]>;
  /** A cheap probe for /readyz (a server's health route); without it, readiness scores one pair. */
  checkReady?(signal?: AbortSignal): Promise<void>;
}
