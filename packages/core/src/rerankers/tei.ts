/**
 * Reranker backed by Text Embeddings Inference serving a cross-encoder (bge-reranker-base in the seed).
 * API: https://huggingface.github.io/text-embeddings-inference/ (POST /rerank)
 * Request `{query, texts, truncate}`, answer `[{index, score}]` sorted by score; errors `{error, error_type}`.
 * TEI's --max-client-batch-size (default 32) also caps `texts`, so larger candidate lists go in batches.
 */
import { RagError } from '../errors.ts';
import { bearer, callJson, callStatus, describeEndpoint, endpoint } from '../http/remote-call.ts';
import type { Reranker, RerankScore } from './reranker.ts';

export interface TeiRerankerOptions {
  url: string;
  apiKey?: string | undefined;
  /** For metrics and logs only: TEI serves one model and /rerank takes no model field. */
  model?: string | undefined;
  /** Texts per request, at most the server's --max-client-batch-size. */
  batchSize?: number | undefined;
  timeoutMs?: number | undefined;
  retries?: number | undefined;
  /** First retry backoff; tests shorten it. */
  minBackoffMs?: number | undefined;
}

/** Readiness is a probe: it must answer fast and once, whatever the rerank timeout. */
const READY_TIMEOUT_MS = 5_000;

export class TeiReranker implements Reranker {
  readonly provider = 'tei';
  readonly modelId: string;
  private readonly batchSize: number;

  constructor(private readonly options: TeiRerankerOptions) {
    this.modelId = options.model ?? 'tei-reranker';
    this.batchSize = options.batchSize ?? 32;
  }

  async rerank(query: string, texts: string[], signal?: AbortSignal): Promise<RerankScore[]> {
    const scores: RerankScore[] = [];
    for (let offset = 0; offset < texts.length; offset += this.batchSize) {
      const batch = texts.slice(offset, offset + this.batchSize);
      const batchScores = await this.rerankBatch(query, batch, signal);
      scores.push(...batchScores.map(({ index, score }) => ({ index: index + offset, score })));
    }
    return scores.sort((a, b) => b.score - a.score);
  }

  /** TEI's `GET /health`: 200 once the model is loaded, 503 `{error, error_type: "unhealthy"}` otherwise. */
  async checkReady(signal?: AbortSignal): Promise<void> {
    await callStatus({
      dependency: 'rerank',
      url: endpoint(this.options.url, '/health'),
      method: 'GET',
      headers: bearer(this.options.apiKey),
      timeoutMs: Math.min(this.options.timeoutMs ?? 120_000, READY_TIMEOUT_MS),
      retries: 0,
      signal,
    });
  }

  private async rerankBatch(query: string, texts: string[], signal?: AbortSignal): Promise<RerankScore[]> {
    const answer = await callJson<unknown>({
      dependency: 'rerank',
      url: endpoint(this.options.url, '/rerank'),
      headers: bearer(this.options.apiKey),
      // truncate: passages longer than the model's window are cut rather than refused with a 413.
      body: { query, texts, truncate: true },
      timeoutMs: this.options.timeoutMs ?? 120_000,
      retries: this.options.retries,
      minBackoffMs: this.options.minBackoffMs,
      signal,
    });
    return this.validScores(answer, texts.length);
  }

  private validScores(answer: unknown, sent: number): RerankScore[] {
    const valid =
      Array.isArray(answer) &&
      answer.length === sent &&
      answer.every((item: { index?: unknown; score?: unknown }) =>
        Number.isInteger(item?.index) && (item.index as number) >= 0 && (item.index as number) < sent && Number.isFinite(item?.score),
      );
    if (!valid) {
      throw new RagError('RAG_RERANK_UNAVAILABLE', `(${describeEndpoint(this.options.url)} answered something other than ${sent} scores)`);
    }
    return (answer as RerankScore[]).map(({ index, score }) => ({ index, score }));
  }
}
