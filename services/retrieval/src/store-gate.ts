import { untilAborted, type Embedder, type VectorStore } from '@rag/core';

/** What the routes and /readyz await before touching the store. */
export interface OpenGate {
  ready(signal?: AbortSignal): Promise<void>;
}

/**
 * Opens the store lazily and heals by itself: a successful open is kept for the life of the process,
 * a failed one is forgotten so the next request tries again. The service can then start while Qdrant or
 * TEI is down and answer normally as soon as they are back, without a restart.
 *
 * Concurrent callers share one attempt; a caller's signal only stops its own wait, never the shared open.
 */
export class StoreGate implements OpenGate {
  private opening: Promise<void> | undefined;

  constructor(
    private readonly store: VectorStore,
    private readonly embedder: Embedder | undefined,
  ) {}

  ready(signal?: AbortSignal): Promise<void> {
    this.opening ??= this.open().catch((error: unknown) => {
      this.opening = undefined;
      throw error;
    });
    return signal ? untilAborted(this.opening, signal) : this.opening;
  }

  private async open(): Promise<void> {
    // The collection records the model and its dimension, so opening needs the embedder's answer first.
    await this.store.open(this.embedder ? await this.embedder.describe() : null);
    // In the background: the server listens meanwhile, /readyz reports the load, queries wait for it.
    this.store.prepareForSearch?.().catch(() => undefined);
  }
}
