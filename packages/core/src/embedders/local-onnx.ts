import { existsSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { pipeline } from '@huggingface/transformers';
import type { FeatureExtractionPipeline, PretrainedModelOptions, Tensor } from '@huggingface/transformers';
import type { EmbeddingModelLock } from '../domain.ts';
import type { Embedder } from './embedder.ts';

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
const LOCAL_LAYOUT = 'config.json, tokenizer.json, tokenizer_config.json and onnx/model.onnx';

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
  try {
    return await pipeline('feature-extraction', source.path, source.loadOptions);
  } catch (error) {
    throw modelLoadError(source, error);
  }
}

function withPrefix(texts: string[], prefix: string | undefined): string[] {
  return prefix ? texts.map((text) => prefix + text) : texts;
}

function rows(tensor: Tensor): number[][] {
  const [count = 0, width = 0] = tensor.dims;
  const data = tensor.data as Float32Array;
  return Array.from({ length: count }, (_, i) => Array.from(data.subarray(i * width, (i + 1) * width)));
}

// ---- Shared with the local cross-encoder reranker: where a model comes from and how it is loaded. ----

export interface ModelSource {
  /** What transformers.js is given: an absolute directory, or the hub id. */
  path: string;
  kind: 'directory' | 'hub';
  allowRemote: boolean;
  cacheDir: string | undefined;
  loadOptions: PretrainedModelOptions;
}

/**
 * A directory that exists loads with downloads disabled; anything else shaped like a path is an error now
 * (not a confusing hub lookup later); the rest is a hub id, fetched into cacheDir unless allowRemote is false.
 */
export function resolveModelSource(options: { model: string; cacheDir?: string; allowRemote?: boolean }): ModelSource {
  const { model, cacheDir } = options;
  const allowRemote = options.allowRemote ?? true;
  const directory = resolve(model);
  if (isDirectory(directory)) {
    // An absolute path, because transformers.js reads a relative one that looks like a hub id under env.localModelPath.
    return { path: directory, kind: 'directory', allowRemote: false, cacheDir, loadOptions: baseLoadOptions(true, cacheDir) };
  }
  if (looksLikePath(model)) {
    throw new Error(
      `Model directory "${directory}" does not exist. Set the model to a directory holding ${LOCAL_LAYOUT}, or to a Hugging Face Hub id such as Xenova/bge-small-en-v1.5.`,
    );
  }
  return { path: model, kind: 'hub', allowRemote, cacheDir, loadOptions: baseLoadOptions(!allowRemote, cacheDir) };
}

/** Turns a transformers.js failure into a message that says what went wrong and how to run offline. */
export function modelLoadError(source: ModelSource, cause: unknown): Error {
  const detail = describeCause(cause);
  const cache = source.cacheDir ? `the cache directory "${source.cacheDir}"` : "transformers.js' default cache directory";
  const offline = `To run without internet access, download the model once where the Hugging Face Hub is reachable (it is kept in ${cache}), or set the model to a local directory holding ${LOCAL_LAYOUT} (for example one saved with huggingface-cli download).`;
  if (source.kind === 'directory') {
    return new Error(`Could not load the local model in "${source.path}": ${detail}. The directory must hold ${LOCAL_LAYOUT}.`, { cause });
  }
  if (!source.allowRemote) {
    return new Error(`Model "${source.path}" is not in ${cache} and downloading is disabled (allowRemote: false): ${detail}. ${offline}`, { cause });
  }
  return new Error(`Could not download model "${source.path}" from the Hugging Face Hub: ${detail}. ${offline}`, { cause });
}

/** Runs `load` once; concurrent callers share the promise, and a failure is forgotten so a later call can retry. */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= load().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}

export function* inBatches<T>(items: T[], size: number): Generator<T[]> {
  for (let start = 0; start < items.length; start += size) yield items.slice(start, start + size);
}

export function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${value}.`);
  return value;
}

function baseLoadOptions(localOnly: boolean, cacheDir: string | undefined): PretrainedModelOptions {
  return {
    local_files_only: localOnly,
    ...(cacheDir ? { cache_dir: cacheDir } : {}),
    device: 'cpu',
    dtype: 'fp32',
    // One thread per model: the service runs several models and requests on a 2-core machine, and
    // onnxruntime's default (one thread per core) oversubscribes it.
    session_options: { intraOpNumThreads: 1, interOpNumThreads: 1 },
  };
}

function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}

function looksLikePath(model: string): boolean {
  return isAbsolute(model) || model.startsWith('.') || model.startsWith('~') || model.includes('\\') || model.split('/').length > 2;
}

function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const message = cause.message.replace(/\.+$/, '');
  const code = (cause.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? `${message} (${code})` : message;
}
