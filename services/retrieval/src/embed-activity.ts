import type { Embedder, EmbeddingModelLock } from '@rag/core';

/**
 * How long a successful embedding call vouches for the embedder. Kubelet asks /readyz every 10 s; a
 * minute of silence from TEI while queries keep succeeding is not an outage.
 */
export const EMBED_SUCCESS_FRESH_MS = 60_000;

/**
 * Remembers when the embedder last answered a call. A CPU TEI busy with a long batch answers /health
 * late (it runs through the model's queue), and a 3 s probe would then take every API pod out of the
 * Service at once although queries are still being embedded: readiness trusts recent successes and
 * probes only when the API has been idle.
 */
export class EmbedActivity {
  private lastSuccessAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly freshMs: number = EMBED_SUCCESS_FRESH_MS,
  ) {}

  /** True when a call succeeded less than freshMs ago. */
  recentlySucceeded(): boolean {
    return this.now() - this.lastSuccessAt < this.freshMs;
  }

  /** The same embedder, reporting each successful call here. */
  track(embedder: Embedder): Embedder {
    const succeeded = <T>(result: T): T => {
      this.lastSuccessAt = this.now();
      return result;
    };
    const tracked: Embedder = {
      get modelId() {
        return embedder.modelId;
      },
      provider: embedder.provider,
      describe: (signal?: AbortSignal): Promise<EmbeddingModelLock> => embedder.describe(signal),
      embedDocuments: async (texts, signal) => succeeded(await embedder.embedDocuments(texts, signal)),
      embedQuery: async (text, signal) => succeeded(await embedder.embedQuery(text, signal)),
    };
    if (embedder.checkReady) tracked.checkReady = (signal) => embedder.checkReady!(signal);
    return tracked;
  }
}
