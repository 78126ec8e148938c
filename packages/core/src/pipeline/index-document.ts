import { createHash } from 'node:crypto';
import { inBatches } from '../batches.ts';
import type { Chunk, DocumentVersion, IndexedChunk } from '../domain.ts';
import type { Embedder } from '../embedders/embedder.ts';
import { contextualText } from '../context/contextual-text.ts';
import { encodeDocument } from '../sparse/bm25-encoder.ts';
import { inSpan, modelCallSpan } from '../tracing/spans.ts';
import type { Bm25Language } from '../sparse/languages/bm25-languages.ts';

export interface ChunkOptions {
  chunkSize: number;
  chunkOverlap: number;
  /** CHUNK_MIN_CHARS: pieces under it are merged into a neighbour; 0 or absent keeps the seed's boundaries. */
  minChars?: number;
}

export function contentHashOf(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Adds dense (when an embedder is configured) and BM25 sparse vectors to a document's chunks, with its version and groups. */
export async function vectorizeChunks(
  chunks: Chunk[],
  version: DocumentVersion & Pick<IndexedChunk, 'groups'>,
  embedder: Embedder | undefined,
  batchSize: number,
  onEmbedCall: () => void,
  signal?: AbortSignal,
  /** One per chunk (CONTEXT_MODE): prepended to the text that is embedded and encoded, stored apart from it. */
  contexts?: readonly string[],
  /** The store's BM25_LANGUAGE (VectorStore.bm25Language); english when absent. */
  bm25Language?: Bm25Language,
): Promise<IndexedChunk[]> {
  const texts = chunks.map((chunk, position) => contextualText(chunk.text, contexts?.[position]));
  const dense = embedder ? await embedInBatches(embedder, texts, batchSize, onEmbedCall, signal) : [];
  const ingestedAt = new Date().toISOString();
  return chunks.map((chunk, position) => ({
    ...chunk,
    ...version,
    dense: dense[position],
    sparse: encodeDocument(texts[position]!, bm25Language),
    ingestedAt,
    context: contexts?.[position] ?? '',
  }));
}

async function embedInBatches(
  embedder: Embedder,
  texts: string[],
  batchSize: number,
  onEmbedCall: () => void,
  signal?: AbortSignal,
): Promise<number[][]> {
  const vectors: number[][] = [];
  for (const batch of inBatches(texts, batchSize)) {
    // A local model may not stop mid-batch: at least the next batch is not started once the run is stopped.
    signal?.throwIfAborted();
    onEmbedCall();
    const [name, options] = modelCallSpan('embeddings', embedder.modelId, embedder.provider ?? 'local', { 'rag.embed.batch_size': batch.length });
    vectors.push(...(await inSpan(name, options, () => embedder.embedDocuments(batch, signal))));
  }
  return vectors;
}
