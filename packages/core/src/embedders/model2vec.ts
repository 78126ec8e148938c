import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PreTrainedTokenizer } from '@huggingface/transformers';
import type { EmbeddingModelLock } from '../domain.ts';
import type { Embedder } from './embedder.ts';
import { loadOnce } from './local-model.ts';

export interface Model2VecEmbedderOptions {
  /** A local Model2Vec directory: tokenizer.json, model.safetensors and config.json. */
  model: string;
  /** Tokens kept per text; the Python library's default is 512. */
  maxLength?: number;
}

interface StaticModel {
  tokenizer: PreTrainedTokenizer;
  /** Row-major [rows, dimension]. */
  embeddings: Float32Array;
  dimension: number;
  /** Per-token scale and row index of vocabulary-quantised models; absent in plain ones. */
  weights: Float64Array | undefined;
  mapping: Int32Array | undefined;
  unkId: number | undefined;
  medianTokenLength: number;
  normalize: boolean;
}

type TypedArray = Float32Array | Float64Array | Int32Array;

const DEFAULT_MAX_LENGTH = 512;
const REQUIRED_FILES = ['tokenizer.json', 'model.safetensors', 'config.json'];

/**
 * Static embeddings (Model2Vec): the mean of per-token vectors, computed exactly as the Python model2vec
 * library does, so vectors match its output. No ONNX session and no download.
 */
export class Model2VecEmbedder implements Embedder {
  readonly provider = 'model2vec';
  readonly modelId: string;
  private readonly maxLength: number;
  private readonly load: () => Promise<StaticModel>;

  constructor(options: Model2VecEmbedderOptions) {
    this.modelId = options.model;
    this.maxLength = options.maxLength ?? DEFAULT_MAX_LENGTH;
    this.load = loadOnce(() => loadStaticModel(options.model));
  }

  async describe(signal?: AbortSignal): Promise<EmbeddingModelLock> {
    signal?.throwIfAborted();
    const { dimension } = await this.load();
    return { model: this.modelId, dimension };
  }

  async embedDocuments(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    signal?.throwIfAborted();
    const model = await this.load();
    return texts.map((text) => embed(model, tokenIds(model, text, this.maxLength)));
  }

  async embedQuery(text: string, signal?: AbortSignal): Promise<number[]> {
    const [vector] = await this.embedDocuments([text], signal);
    return vector ?? [];
  }
}

async function loadStaticModel(model: string): Promise<StaticModel> {
  const directory = resolve(model);
  const missing = REQUIRED_FILES.filter((file) => !existsSync(join(directory, file)));
  if (missing.length > 0) {
    throw new Error(`Model2Vec directory "${directory}" lacks ${missing.join(', ')}. Set the model to a folder saved by model2vec (save_pretrained).`);
  }
  const [tokenizerJson, config, tensors] = await Promise.all([
    readJson(join(directory, 'tokenizer.json')),
    readJson(join(directory, 'config.json')),
    readFile(join(directory, 'model.safetensors')).then(parseSafetensors),
  ]);
  const tokenizer = new PreTrainedTokenizer(tokenizerJson, {});
  const embeddings = tensors.get('embeddings') ?? tensors.get('0');
  if (!embeddings || !(embeddings.data instanceof Float32Array) || embeddings.shape.length !== 2) {
    throw new Error(`Model2Vec directory "${directory}" has no F32 or F16 2-D "embeddings" tensor in model.safetensors.`);
  }
  return {
    tokenizer,
    embeddings: embeddings.data,
    dimension: embeddings.shape[1] ?? 0,
    weights: asType(tensors.get('weights')?.data, Float64Array),
    mapping: asType(tensors.get('mapping')?.data, Int32Array),
    unkId: typeof tokenizer.model.unk_token_id === 'number' ? tokenizer.model.unk_token_id : undefined,
    medianTokenLength: medianLength(tokenizer.model.vocab),
    // The Python library's default when config.json does not say.
    normalize: (config as { normalize?: unknown }).normalize === true,
  };
}

/** model2vec's tokenize(): cut the text to maxLength * median token length, drop unknown tokens, keep maxLength ids. */
function tokenIds(model: StaticModel, text: string, maxLength: number): number[] {
  const characters = Array.from(text);
  const cut = maxLength * model.medianTokenLength;
  const truncated = characters.length > cut ? characters.slice(0, cut).join('') : text;
  const ids = model.tokenizer.encode(truncated, { add_special_tokens: false });
  return ids.filter((id) => id !== model.unkId).slice(0, maxLength);
}

function embed(model: StaticModel, ids: number[]): number[] {
  const sum = new Float64Array(model.dimension);
  for (const id of ids) {
    const row = model.mapping ? (model.mapping[id] ?? 0) : id;
    const weight = model.weights ? (model.weights[id] ?? 0) : 1;
    const offset = row * model.dimension;
    for (let d = 0; d < model.dimension; d++) sum[d]! += weight * (model.embeddings[offset + d] ?? 0);
  }
  const mean = Array.from(sum, (value) => (ids.length > 0 ? value / ids.length : 0));
  return model.normalize ? unit(mean) : mean;
}

function unit(vector: number[]): number[] {
  const norm = Math.hypot(...vector) + 1e-32;
  return vector.map((value) => value / norm);
}

/** int(np.median(token lengths)), with lengths in code points like Python's len(). */
function medianLength(vocab: string[]): number {
  const lengths = vocab.map((token) => Array.from(token).length).sort((a, b) => a - b);
  const middle = lengths.length / 2;
  const median = lengths.length % 2 === 1 ? lengths[Math.floor(middle)]! : (lengths[middle - 1]! + lengths[middle]!) / 2;
  return Math.max(1, Math.floor(median));
}

/** safetensors: an 8-byte little-endian header length, a JSON header, then the raw little-endian tensors. */
export function parseSafetensors(bytes: Buffer): Map<string, { shape: number[]; data: TypedArray }> {
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8')) as Record<string, unknown>;
  const base = bytes.byteOffset + 8 + headerLength;
  const tensors = new Map<string, { shape: number[]; data: TypedArray }>();
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const { dtype, shape, data_offsets: [begin, end] } = entry as { dtype: string; shape: number[]; data_offsets: [number, number] };
    // ArrayBuffer.slice copies, so the typed array is aligned whatever the offset in the file.
    tensors.set(name, { shape, data: typedArray(dtype, bytes.buffer.slice(base + begin, base + end)) });
  }
  return tensors;
}

function typedArray(dtype: string, buffer: ArrayBufferLike): TypedArray {
  if (dtype === 'F32') return new Float32Array(buffer);
  // model2vec's distill() saves float16 embeddings by default; widened once at load, the sums stay in float64.
  if (dtype === 'F16') return widenHalves(new Uint16Array(buffer));
  if (dtype === 'F64') return new Float64Array(buffer);
  if (dtype === 'I32') return new Int32Array(buffer);
  if (dtype === 'I64') return Int32Array.from(new BigInt64Array(buffer), Number);
  throw new Error(`Unsupported safetensors dtype ${dtype}; Model2Vec models here must be F32 or F16 (with F64 weights, I32/I64 mapping).`);
}

let halfValues: Float32Array | undefined;

/** Through a table of all 65,536 values: per-element arithmetic took seconds on a 7.5M-value table. */
function widenHalves(halves: Uint16Array): Float32Array {
  halfValues ??= Float32Array.from({ length: 0x10000 }, (_, bits) => halfToFloat(bits));
  const values = new Float32Array(halves.length);
  for (let i = 0; i < halves.length; i++) values[i] = halfValues[halves[i]!]!;
  return values;
}

/** IEEE 754 binary16 to a number (Node 20 has no Float16Array): sign, 5-bit exponent (bias 15), 10-bit fraction. */
function halfToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 0x1f) return fraction ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

function asType<T extends TypedArray>(data: TypedArray | undefined, type: new (...args: never[]) => T): T | undefined {
  return data instanceof type ? data : undefined;
}

async function readJson(path: string): Promise<unknown> {
  return JSON.parse(await readFile(path, 'utf8')) as unknown;
}
