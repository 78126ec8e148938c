import { AutoModelForSequenceClassification, AutoTokenizer } from '@huggingface/transformers';
import type { PreTrainedModel, PreTrainedTokenizer, Tensor } from '@huggingface/transformers';
import { inBatches } from '../batches.ts';
import { loadOnce, modelLoadError, positiveInteger, resolveModelSource } from '../embedders/local-model.ts';
import type { ModelSource } from '../embedders/local-model.ts';
import type { RerankScore, Reranker } from './reranker.ts';

export interface LocalCrossEncoderRerankerOptions {
  /** A Hugging Face Hub id such as "Xenova/ms-marco-MiniLM-L-6-v2", or a local directory in transformers.js layout. */
  model: string;
  cacheDir?: string;
  batchSize?: number;
  /** Whether a hub id may be downloaded; when false only the cache is read. Default true. */
  allowRemote?: boolean;
}

interface CrossEncoder {
  tokenizer: PreTrainedTokenizer;
  model: PreTrainedModel;
}

const DEFAULT_BATCH_SIZE = 32;

/**
 * Scores (query, passage) pairs in-process with ONNX Runtime (CPU), tokenised as `[CLS] q [SEP] d [SEP]`.
 * The score is sigmoid(logit of the first label), which is what TEI's /rerank returns by default
 * (raw_scores: false) for single-logit models, so a score threshold means the same with either reranker.
 */
export class LocalCrossEncoderReranker implements Reranker {
  readonly provider = 'onnxruntime';
  readonly modelId: string;
  private readonly batchSize: number;
  private readonly load: () => Promise<CrossEncoder>;

  constructor(options: LocalCrossEncoderRerankerOptions) {
    this.modelId = options.model;
    this.batchSize = positiveInteger(options.batchSize ?? DEFAULT_BATCH_SIZE, 'batchSize');
    this.load = loadOnce(() => loadCrossEncoder(options));
  }

  async rerank(query: string, texts: string[], signal?: AbortSignal): Promise<RerankScore[]> {
    if (texts.length === 0) return [];
    signal?.throwIfAborted();
    const encoder = await this.load();
    const scores: number[] = [];
    for (const batch of inBatches(texts, this.batchSize)) {
      signal?.throwIfAborted();
      scores.push(...(await scoreBatch(encoder, query, batch)));
    }
    return scores.map((score, index) => ({ index, score })).sort((a, b) => b.score - a.score || a.index - b.index);
  }

  /** Releases the ONNX session; a later call loads the model again. */
  async dispose(): Promise<void> {
    const encoder = await this.load().catch(() => undefined);
    await encoder?.model.dispose();
  }
}

async function loadCrossEncoder(options: LocalCrossEncoderRerankerOptions): Promise<CrossEncoder> {
  const source = resolveModelSource(options);
  try {
    return await loadFrom(source);
  } catch (error) {
    throw modelLoadError(source, error);
  }
}

async function loadFrom(source: ModelSource): Promise<CrossEncoder> {
  const tokenizer = await AutoTokenizer.from_pretrained(source.path, source.loadOptions);
  const model = await AutoModelForSequenceClassification.from_pretrained(source.path, source.loadOptions);
  return { tokenizer, model };
}

async function scoreBatch({ tokenizer, model }: CrossEncoder, query: string, texts: string[]): Promise<number[]> {
  const inputs = tokenizer(
    texts.map(() => query),
    { text_pair: texts, padding: true, truncation: true },
  );
  const { logits } = (await model(inputs)) as { logits: Tensor };
  return firstColumn(logits).map(sigmoid);
}

function firstColumn(logits: Tensor): number[] {
  const [count = 0, labels = 1] = logits.dims;
  const data = logits.data as Float32Array;
  return Array.from({ length: count }, (_, i) => data[i * labels] ?? Number.NaN);
}

function sigmoid(logit: number): number {
  return 1 / (1 + Math.exp(-logit));
}
