import type { EmbeddingModelLock } from '../domain.ts';

/** Turns text into dense vectors. Documents and queries may be embedded differently (e5-style prefixes). */
export interface Embedder {
  readonly modelId: string;
  /** Who runs the model, for the gen_ai.provider.name metric attribute (tei, onnxruntime, …). */
  readonly provider?: string;
  /** The model and its output dimension; may call the model once to learn the dimension. */
  describe(signal?: AbortSignal): Promise<EmbeddingModelLock>;
  embedDocuments(texts: string[], signal?: AbortSignal): Promise<number[][]>;
  embedQuery(text: string, signal?: AbortSignal): Promise<number[]>;
  /** A cheap probe for /readyz (a server's health route); without it, readiness loads the model through describe(). */
  checkReady?(signal?: AbortSignal): Promise<void>;
}
