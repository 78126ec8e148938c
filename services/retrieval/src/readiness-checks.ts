import type { ChatModel, Embedder, Reranker, StructuredOutput, VectorStore } from '@rag/core';
import { isRagError } from '@rag/core';
import type { ReadinessCheck } from './routes/health.ts';
import type { EmbedActivity } from './embed-activity.ts';
import type { OpenGate } from './store-gate.ts';

export interface ReadinessTargets {
  gate: OpenGate;
  store: VectorStore;
  embedder?: Embedder | undefined;
  /** Successful embedding calls stand in for the embed probe while they are recent. */
  embedActivity?: EmbedActivity | undefined;
  reranker?: Reranker | undefined;
  chatModel?: ChatModel | undefined;
}

/**
 * One check per configured dependency, in the order /readyz reports the first failure: store, embed,
 * rerank, gateway. Only the store and the embedder decide readiness (they are what /search needs); the
 * reranker (/search falls back to the fused ranking) and the gateway (only /chat needs it) are optional.
 */
export function readinessChecks(targets: ReadinessTargets): ReadinessCheck[] {
  const { gate, store, embedder, embedActivity, reranker, chatModel } = targets;
  const checks: ReadinessCheck[] = [{ name: 'store', timeoutCode: 'RAG_STORE_TIMEOUT', check: (signal) => storeReady(gate, store, signal) }];
  if (embedder) checks.push({ name: 'embed', timeoutCode: 'RAG_EMBED_TIMEOUT', check: (signal) => embedReady(embedder, embedActivity, signal) });
  if (reranker) checks.push({ name: 'rerank', optional: true, timeoutCode: 'RAG_RERANK_TIMEOUT', check: (signal) => rerankReady(reranker, signal) });
  if (chatModel?.checkReady) {
    checks.push({ name: 'gateway', optional: true, timeoutCode: 'RAG_GATEWAY_TIMEOUT', check: (signal) => chatModel.checkReady!(signal) });
  }
  return checks;
}

/**
 * The gate also needs the embedder (the collection records its dimension): when the open fails for a
 * reason that is not the store's, the store is judged by its own probe and the embed check names the
 * culprit. The probe starts at once rather than after the gate, so the two waits do not add up.
 */
async function storeReady(gate: OpenGate, store: VectorStore, signal: AbortSignal): Promise<void> {
  const probe = store.checkReady(signal);
  probe.catch(() => undefined); // judged below, or superseded
  try {
    await gate.ready(signal);
  } catch (error) {
    if (isStoreFailure(error) || signal.aborted) throw error;
    return probe;
  }
  // Checked again after the open: the probe may have run before the gate created the collection.
  await store.checkReady(signal);
}

function isStoreFailure(error: unknown): boolean {
  return !isRagError(error) || error.code.startsWith('RAG_STORE_') || error.code === 'RAG_MODEL_MISMATCH';
}

/**
 * Ready without a call when embedding calls succeeded recently (a TEI busy with long batches answers
 * /health late, not never); otherwise a server probe when the adapter has one (TEI /health), and a local
 * model is ready once it loads.
 */
async function embedReady(embedder: Embedder, activity: EmbedActivity | undefined, signal: AbortSignal): Promise<void> {
  if (activity?.recentlySucceeded()) return;
  if (embedder.checkReady) return embedder.checkReady(signal);
  await embedder.describe(signal);
}

async function rerankReady(reranker: Reranker, signal: AbortSignal): Promise<void> {
  if (reranker.checkReady) return reranker.checkReady(signal);
  await reranker.rerank('ready', ['ready'], signal);
}

/** What /readyz reports beside its checks: the shape answers are asked in (GATEWAY_STRUCTURED), when there is a gateway. */
export function readinessDetails(structuredOutput: StructuredOutput | undefined): (() => Record<string, unknown>) | undefined {
  return structuredOutput && (() => ({ gateway: { structured_output: structuredOutput.current } }));
}
