import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from '@huggingface/transformers';
import type { FeatureExtractionPipeline, Tensor } from '@huggingface/transformers';
import type { EmbeddingModelLock } from '../domain.ts';
import type { Embedder } from './embedder.ts';
import { inBatches } from '../batches.ts';
import { loadOnce, modelLoadError, positiveInteger, resolveModelSource } from './local-model.ts';

export interface LocalOnnxEmbedderOptions {
  /** A Hugging Face Hub id such as "Xenova/bge-small-en-v1.5", or a local directory in transformers.js layout. */
  model: string;
  /** Where hub models are downloaded and cached; transformers.js' own default when unset. */
  cacheDir?: string;
  /** e5-style prefix for queries, e.g. "query: ". Nothing is prepended when unset. */
  queryPrefix?: string;
  /** e5-style prefix for documents, e.g. "passage: ". Nothing is prepended when unset. */
  passagePrefix?: string;
  batchSize?: number;
  /** Whether a hub id may be downloaded; when false only the cache is read. Default true. */
  allowRemote?: boolean;
}

const DEFAULT_BATCH_SIZE = 32;

/** Dense embeddings computed in-process with ONNX Runtime (CPU): mean pooling over real tokens, then L2 normalisation. */
export class LocalOnnxEmbedder implements Embedder {
  readonly provider = 'onnxruntime';
  readonly modelId: string;
  private readonly options: LocalOnnxEmbedderOptions;
  private readonly batchSize: number;
  private readonly load: () => Promise<FeatureExtractionPipeline>;
  private dimension: number | undefined;

  constructor(options: LocalOnnxEmbedderOptions) {
    this.options = options;
    this.modelId = options.model;
    this.batchSize = positiveInteger(options.batchSize ?? DEFAULT_BATCH_SIZE, 'batchSize');
    this.load = loadOnce(() => loadPipeline(options));
  }

  async describe(signal?: AbortSignal): Promise<EmbeddingModelLock> {
    this.dimension ??= (await this.embed(['dimension probe'], signal))[0]?.length ?? 0;
    return { model: this.modelId, dimension: this.dimension };
  }

  embedDocuments(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    return this.embed(withPrefix(texts, this.options.passagePrefix), signal);
  }

  async embedQuery(text: string, signal?: AbortSignal): Promise<number[]> {
    const [vector] = await this.embed(withPrefix([text], this.options.queryPrefix), signal);
    if (!vector) throw new Error('The embedding model returned no vector for the query.');
    return vector;
  }

  /** Releases the ONNX session; a later call loads the model again. */
  async dispose(): Promise<void> {
    const extractor = await this.load().catch(() => undefined);
    await extractor?.dispose();
  }

  private async embed(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    if (texts.length === 0) return [];
    signal?.throwIfAborted();
    const extractor = await this.load();
    const vectors: number[][] = [];
    for (const batch of inBatches(texts, this.batchSize)) {
      signal?.throwIfAborted();
      const output: Tensor = await extractor(batch, { pooling: 'mean', normalize: true });
      vectors.push(...rows(output));
    }
    return vectors;
  }
}

async function loadPipeline(options: LocalOnnxEmbedderOptions): Promise<FeatureExtractionPipeline> {
  const source = resolveModelSource(options);
  let extractor: FeatureExtractionPipeline;
  try {
    extractor = await pipeline('feature-extraction', source.path, source.loadOptions);
  } catch (error) {
    throw modelLoadError(source, error);
  }
  const trainedLength = source.kind === 'directory' ? sentenceTransformersMaxLength(source.path) : undefined;
  if (trainedLength !== undefined) extractor.tokenizer.model_max_length = trainedLength;
  return extractor;
}

/**
 * A sentence-transformers folder truncates at sentence_bert_config.json's max_seq_length (256 for
 * all-MiniLM-L6-v2), not at tokenizer_config.json's model_max_length (512 there), which is all transformers.js
 * reads: sentence-transformers makes the former the tokenizer's model_max_length (sentence_transformers/base/
 * modules/transformer.py, Transformer.__init__), and so do we, so a long chunk is embedded from the same tokens.
 */
function sentenceTransformersMaxLength(directory: string): number | undefined {
  const path = join(directory, 'sentence_bert_config.json');
  if (!existsSync(path)) return undefined;
  const { max_seq_length: maxLength } = JSON.parse(readFileSync(path, 'utf8')) as { max_seq_length?: unknown };
  return typeof maxLength === 'number' && Number.isInteger(maxLength) && maxLength > 0 ? maxLength : undefined;
}

function withPrefix(texts: string[], prefix: string | undefined): string[] {
  return prefix ? texts.map((text) => prefix + text) : texts;
}

function rows(tensor: Tensor): number[][] {
  const [count = 0, width = 0] = tensor.dims;
  const data = tensor.data as Float32Array;
  return Array.from({ length: count }, (_, i) => Array.from(data.subarray(i * width, (i + 1) * width)));
}
