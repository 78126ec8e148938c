/**
 * Embedder backed by Hugging Face Text Embeddings Inference, through its OpenAI-compatible route.
 * API: https://huggingface.github.io/text-embeddings-inference/ (POST /v1/embeddings)
 * Request `{input: string[], model}`, answer `{object: "list", data: [{object, embedding, index}], model, usage}`.
 * Errors on this route are `{message, code, type}` (TEI's OpenAICompatErrorResponse); a batch over
 * --max-client-batch-size is "batch size N > maximum allowed batch size M", 413 in current TEI, 422 in
 * the releases the seed ran.
 *
 * llama.cpp's llama-server (`pnpm llm:serve nomic-embed-text-v1.5`) serves the same route with the same
 * request and answer (tools/server/README.md, "POST /v1/embeddings"; vectors L2-normalised), GET /health
 * (503 while the model loads, then 200), and instead of TEI's GET /info an OpenAI GET /v1/models whose one
 * entry's `id` is the server's --alias: that id becomes the model lock when EMBED_MODEL is unset.
 */
import type { EmbeddingModelLock } from '../domain.ts';
import { RagError } from '../errors.ts';
import { bearer, callJson, callStatus, describeEndpoint, endpoint, HttpStatusError } from '../http/remote-call.ts';
import { inBatches } from '../batches.ts';
import { untilAborted } from '../until-aborted.ts';
import type { Embedder } from './embedder.ts';

export interface TeiEmbedderOptions {
  url: string;
  apiKey?: string | undefined;
  /** Sent as `model` (TEI serves one model and ignores it); unset: the model id TEI reports on GET /info. */
  model?: string | undefined;
  /** Texts per request; TEI refuses more than its --max-client-batch-size (default 32). */
  batchSize?: number | undefined;
  timeoutMs?: number | undefined;
  /** Prepended to queries and passages for models trained with prefixes (e5: "query: ", "passage: "). */
  queryPrefix?: string | undefined;
  passagePrefix?: string | undefined;
  retries?: number | undefined;
  /** First retry backoff; tests shorten it. */
  minBackoffMs?: number | undefined;
}

interface OpenAiEmbeddingResponse {
  data?: Array<{ embedding?: unknown; index?: unknown }>;
}

const DIMENSION_PROBE = 'dimension probe';
/** Readiness is a probe: it must answer fast and once, whatever the embedding timeout. */
const READY_TIMEOUT_MS = 5_000;

interface TeiInfo {
  model_id?: unknown;
}

interface OpenAiModelList {
  data?: Array<{ id?: unknown }>;
}

export class TeiEmbedder implements Embedder {
  readonly provider = 'tei';
  modelId: string;
  private readonly batchSize: number;
  private lock: Promise<EmbeddingModelLock> | undefined;

  constructor(private readonly options: TeiEmbedderOptions) {
    this.modelId = options.model ?? 'tei';
    this.batchSize = options.batchSize ?? 32;
  }

  /**
   * The model the collection is locked to: EMBED_MODEL, or else the id TEI itself reports, so that a
   * TEI redeployed with another model is caught even when nobody set EMBED_MODEL (the seed did not).
   * The dimension comes from embedding one short string. Both are learnt once.
   */
  async describe(signal?: AbortSignal): Promise<EmbeddingModelLock> {
    // One probe shared by every caller, under its own timeout: a caller that goes away stops waiting
    // for it without failing the others.
    this.lock ??= this.probeModel().catch((error: unknown) => {
      this.lock = undefined; // a failed probe must not be cached
      throw error;
    });
    return signal ? untilAborted(this.lock, signal) : this.lock;
  }

  private async probeModel(): Promise<EmbeddingModelLock> {
    const model = this.options.model ?? (await this.reportedModelId());
    this.modelId = model;
    const [vector] = await this.embedBatch([DIMENSION_PROBE]);
    return { model, dimension: vector?.length ?? 0 };
  }

  /**
   * TEI's `GET /info` answers `{model_id, model_sha, model_type, max_client_batch_size, …}`; a server without
   * that route (404: llama-server, other OpenAI-compatible servers) is asked `GET /v1/models` for its one model.
   */
  private async reportedModelId(signal?: AbortSignal): Promise<string> {
    try {
      const info = await callJson<TeiInfo>(this.getCall('/info', signal));
      if (typeof info.model_id !== 'string' || info.model_id === '') throw this.badAnswer('GET /info reported no model_id');
      return info.model_id;
    } catch (error) {
      if (!(error instanceof RagError && error.cause instanceof HttpStatusError && error.cause.status === 404)) throw error;
    }
    const models = await callJson<OpenAiModelList>(this.getCall('/v1/models', signal));
    const ids = (Array.isArray(models.data) ? models.data : []).map((model) => model.id).filter((id): id is string => typeof id === 'string' && id !== '');
    if (ids.length !== 1) throw this.badAnswer(`GET /info: 404, and GET /v1/models listed ${ids.length} models (set EMBED_MODEL to the one to use)`);
    return ids[0]!;
  }

  private getCall(path: string, signal: AbortSignal | undefined) {
    return {
      dependency: 'embed' as const,
      url: endpoint(this.options.url, path),
      method: 'GET',
      headers: bearer(this.options.apiKey),
      timeoutMs: this.options.timeoutMs ?? 30_000,
      retries: this.options.retries,
      minBackoffMs: this.options.minBackoffMs,
      signal,
    };
  }

  async embedDocuments(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    const prefixed = texts.map((text) => `${this.options.passagePrefix ?? ''}${text}`);
    const vectors: number[][] = [];
    for (const batch of inBatches(prefixed, this.batchSize)) vectors.push(...(await this.embedBatch(batch, signal)));
    return vectors;
  }

  async embedQuery(text: string, signal?: AbortSignal): Promise<number[]> {
    const [vector] = await this.embedBatch([`${this.options.queryPrefix ?? ''}${text}`], signal);
    if (!vector) throw this.badAnswer('no embedding for the query');
    return vector;
  }

  /**
   * TEI's `GET /health`: 200 once the model is loaded and a test batch ran, 503 `{error, error_type: "unhealthy"}`
   * otherwise (the seed's Kubernetes probes use the same route).
   */
  async checkReady(signal?: AbortSignal): Promise<void> {
    await callStatus({
      dependency: 'embed',
      url: endpoint(this.options.url, '/health'),
      method: 'GET',
      headers: bearer(this.options.apiKey),
      timeoutMs: Math.min(this.options.timeoutMs ?? 30_000, READY_TIMEOUT_MS),
      retries: 0,
      signal,
    });
  }

  private async embedBatch(input: string[], signal?: AbortSignal): Promise<number[][]> {
    const response = await callJson<OpenAiEmbeddingResponse>({
      dependency: 'embed',
      url: endpoint(this.options.url, '/v1/embeddings'),
      headers: bearer(this.options.apiKey),
      body: { input, model: this.modelId },
      timeoutMs: this.options.timeoutMs ?? 30_000,
      retries: this.options.retries,
      minBackoffMs: this.options.minBackoffMs,
      signal,
      classifyStatus: (failure) => this.batchTooLarge(failure, input.length),
    });
    return this.vectorsInInputOrder(response, input.length);
  }

  /** The answer's `index` gives each vector's input position; OpenAI does not promise order. */
  private vectorsInInputOrder(response: OpenAiEmbeddingResponse, expected: number): number[][] {
    const data = Array.isArray(response.data) ? response.data : [];
    const vectors = new Array<number[] | undefined>(expected);
    for (const item of data) {
      if (typeof item.index === 'number' && isVector(item.embedding)) vectors[item.index] = item.embedding;
    }
    if (data.length !== expected || vectors.some((vector) => vector === undefined)) {
      throw this.badAnswer(`${data.length} embeddings for ${expected} inputs`);
    }
    return vectors as number[][];
  }

  private batchTooLarge(failure: HttpStatusError, sent: number): RagError | undefined {
    if ((failure.status !== 413 && failure.status !== 422) || !/batch size/i.test(failure.serverMessage)) return undefined;
    return new RagError(
      'RAG_EMBED_BATCH_TOO_LARGE',
      `(${describeEndpoint(this.options.url)} refused ${sent} texts: "${failure.serverMessage}". EMBED_BATCH_SIZE is ${this.batchSize}; ` +
        `set it to at most the server's --max-client-batch-size.)`,
      { cause: failure },
    );
  }

  private badAnswer(what: string): RagError {
    return new RagError('RAG_EMBED_UNAVAILABLE', `(${describeEndpoint(this.options.url)} answered ${what})`);
  }
}

function isVector(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((x) => typeof x === 'number');
}
