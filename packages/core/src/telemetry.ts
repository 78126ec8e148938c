import type { Attributes, Counter, Histogram } from '@opentelemetry/api';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';

export type PipelineStage = 'embed' | 'sparse' | 'search' | 'rerank' | 'gateway' | 'condense';

/**
 * The service's metrics, named after the OpenTelemetry GenAI semantic conventions where one exists
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-metrics/) and `rag.*` for the rest.
 * Prometheus shows them with dots as underscores, e.g. gen_ai_client_operation_duration_bucket.
 */
export class Telemetry {
  private readonly exporter = new PrometheusExporter({ preventServerStart: true });
  private readonly provider = new MeterProvider({ readers: [this.exporter] });
  private readonly meter = this.provider.getMeter('rag-suite');
  private readonly serializer = new PrometheusSerializer();

  private readonly operationDuration = this.meter.createHistogram('gen_ai.client.operation.duration', {
    unit: 's',
    description: 'Duration of a model call (embeddings, rerank, chat).',
    advice: { explicitBucketBoundaries: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92, 163.84] },
  });
  private readonly tokenUsage = this.meter.createHistogram('gen_ai.client.token.usage', {
    unit: '{token}',
    description: 'Tokens used by a chat completion, by gen_ai.token.type (input|output).',
    advice: { explicitBucketBoundaries: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536] },
  });
  private readonly stageDuration = this.meter.createHistogram('rag.retrieval.stage.duration', {
    unit: 's',
    description: 'Duration of one retrieval pipeline stage (embed|sparse|search|rerank|gateway|condense).',
    advice: { explicitBucketBoundaries: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120] },
  });
  private readonly topScore = this.meter.createHistogram('rag.retrieval.top_score', {
    description: 'Score of the best passage of each retrieval, by reranked (true: rerank probability, false: fused RRF score); separates in-scope from out-of-scope questions.',
    advice: { explicitBucketBoundaries: [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1] },
  });
  private readonly requests: Counter = this.meter.createCounter('rag.retrieval.requests', {
    // No API key name here: /metrics answers without a key, and the names of RAG_AUTH_FILE tell who uses the
    // service. The request log carries the name of each request's key.
    description: 'API requests by route and outcome (ok|client_error|dependency_error|error).',
  });

  private readonly rerankFallbacks: Counter = this.meter.createCounter('rag.retrieval.rerank.fallbacks', {
    description: 'Retrievals answered from the fused ranking because the reranker failed or is known to be down, by error.type (the RAG_* code).',
  });

  private readonly followUps: Counter = this.meter.createCounter('rag.conversation.follow_ups', {
    description: 'Follow-up questions by how their search query was made (condensed|expanded|condense_failed: the gateway failed and the LLM-free query was used).',
  });

  /** One follow-up question (a request with earlier turns) and how its search query was made. */
  recordFollowUp(method: 'condensed' | 'expanded' | 'condense_failed'): void {
    this.followUps.add(1, { 'rag.search_query.method': method });
  }

  recordRequest(route: string, outcome: string): void {
    this.requests.add(1, { route, outcome });
  }

  /** One retrieval that skipped the reranker (RERANK_FALLBACK=fused); `code` is the failure that took it down. */
  recordRerankFallback(code: string): void {
    this.rerankFallbacks.add(1, { 'error.type': code });
  }

  recordStage(stage: PipelineStage, seconds: number): void {
    this.stageDuration.record(seconds, { stage });
  }

  /**
   * `reranked`: whether the score is the reranker's (a probability) or the fused RRF score of a retrieval that
   * skipped it (no reranker, too few candidates, or an outage): two scales, told apart so that an alert on the
   * reranked scores does not fire when a reranker outage swaps in the other.
   */
  recordTopScore(score: number, reranked: boolean): void {
    this.topScore.record(score, { reranked: String(reranked) });
  }

  recordModelCall(operation: 'embeddings' | 'rerank' | 'chat', provider: string, model: string, seconds: number): void {
    const attributes: Attributes = {
      'gen_ai.operation.name': operation,
      'gen_ai.provider.name': provider,
      'gen_ai.request.model': model,
    };
    this.operationDuration.record(seconds, attributes);
  }

  recordTokens(model: string, input: number, output: number): void {
    this.recordTokenCount(this.tokenUsage, model, 'input', input);
    this.recordTokenCount(this.tokenUsage, model, 'output', output);
  }

  /** Prometheus text exposition of everything recorded so far. */
  async scrape(): Promise<string> {
    const { resourceMetrics } = await this.exporter.collect();
    return this.serializer.serialize(resourceMetrics);
  }

  async shutdown(): Promise<void> {
    await this.provider.shutdown();
  }

  private recordTokenCount(histogram: Histogram, model: string, type: 'input' | 'output', count: number): void {
    histogram.record(count, { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': model, 'gen_ai.token.type': type });
  }
}

/** Measures an async step in seconds. */
export async function timed<T>(work: () => Promise<T>, record: (seconds: number) => void): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    record((performance.now() - started) / 1000);
  }
}
