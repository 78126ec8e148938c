import { context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-node';
import { propagateOnFetch } from './fetch-propagation.ts';
import { setQueryRecording } from './query-recording.ts';
import { parseResourceAttributes, tracesEndpoint, tracesProtocol, type OtlpHttpProtocol, type TracingConfig } from './tracing-config.ts';

/** The running tracing of a process: flushed and shut down with it. */
export interface Tracing {
  readonly enabled: boolean;
  /** Exports the spans ended so far (tests, the end of an ingest run). */
  forceFlush(): Promise<void>;
  /** Exports what is left (a failed export is dropped, never thrown) and restores the no-op API. */
  shutdown(): Promise<void>;
}

export interface StartTracingOptions {
  /** service.name when OTEL_SERVICE_NAME is unset. */
  serviceName: string;
  /** How the exporter is made; tests count its calls. */
  createExporter?: (url: string, protocol: OtlpHttpProtocol) => SpanExporter;
}

const OFF: Tracing = { enabled: false, forceFlush: async () => undefined, shutdown: async () => undefined };

/**
 * Tracing from the OTEL_* variables. Without an endpoint nothing is created: the API stays the no-op
 * one, whose spans are never recorded and cost a function call. With one, a NodeTracerProvider is
 * registered globally with the AsyncLocalStorage context manager (register()'s default) and the W3C
 * trace context propagator alone: register()'s default adds W3C Baggage, which would hand any caller's
 * `baggage` header (a tenant, a user id, kilobytes of it) to every service we call. Spans are batched to the OTLP/HTTP endpoint, and every fetch carries the
 * active span's traceparent.
 */
export function startTracing(config: TracingConfig, options: StartTracingOptions): Tracing {
  const url = tracesEndpoint(config);
  if (!url) return OFF;
  const exporter = (options.createExporter ?? createOtlpExporter)(url, tracesProtocol(config));
  const provider = new NodeTracerProvider({
    resource: resourceOf(config, options.serviceName),
    sampler: samplerOf(config),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  const stopPropagation = propagateOnFetch();
  setQueryRecording(config.OTEL_RAG_RECORD_QUERY);
  return {
    enabled: true,
    forceFlush: () => provider.forceFlush(),
    async shutdown() {
      stopPropagation();
      setQueryRecording(false);
      try {
        await provider.shutdown();
      } catch {
        // Spans are best effort: a collector that is down must not fail an ingest run or a shutdown.
      } finally {
        trace.disable();
        context.disable();
        propagation.disable();
      }
    },
  };
}

function createOtlpExporter(url: string, protocol: OtlpHttpProtocol): SpanExporter {
  return protocol === 'http/json' ? new OtlpJsonExporter({ url }) : new OtlpProtobufExporter({ url });
}

function resourceOf(config: TracingConfig, serviceName: string): Resource {
  return defaultResource()
    .merge(resourceFromAttributes(parseResourceAttributes(config.OTEL_RESOURCE_ATTRIBUTES)))
    .merge(resourceFromAttributes({ 'service.name': config.OTEL_SERVICE_NAME ?? serviceName }));
}

/** OTEL_TRACES_SAMPLER as the spec defines each name; the ratio defaults to 1. */
export function samplerOf(config: Pick<TracingConfig, 'OTEL_TRACES_SAMPLER' | 'OTEL_TRACES_SAMPLER_ARG'>): Sampler {
  const ratio = config.OTEL_TRACES_SAMPLER_ARG ?? 1;
  switch (config.OTEL_TRACES_SAMPLER) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}
