/**
 * Tracing is configured by the SDK's standard variables
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/) and is nothing at
 * all without an endpoint: no exporter, no provider, the API's no-op tracer and propagator.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, isRagError, loadConfig, parseResourceAttributes, samplerOf, startTracing, suiteTracer, tracesEndpoint, type Tracing } from '../../src/index.ts';

let running: Tracing | undefined;
afterEach(async () => {
  await running?.shutdown();
  running = undefined;
});

describe('tracing off', () => {
  it('creates no exporter and leaves the no-op tracer and propagator when no endpoint is set', () => {
    const createExporter = vi.fn(() => new InMemorySpanExporter());
    running = startTracing(loadConfig({}), { serviceName: 'test', createExporter });
    expect(running.enabled).toBe(false);
    expect(createExporter).not.toHaveBeenCalled();
    const span = suiteTracer().startSpan('anything');
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext().traceId).toBe('0'.repeat(32));
    const carrier: Record<string, string> = {};
    propagation.inject(trace.setSpan(context.active(), span), carrier);
    expect(carrier).toEqual({});
  });

  it('stays off with an endpoint when OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none', () => {
    const createExporter = vi.fn(() => new InMemorySpanExporter());
    for (const off of [{ OTEL_SDK_DISABLED: 'true' }, { OTEL_TRACES_EXPORTER: 'none' }]) {
      const tracing = startTracing(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', ...off }), { serviceName: 'test', createExporter });
      expect(tracing.enabled).toBe(false);
    }
    expect(createExporter).not.toHaveBeenCalled();
  });
});

describe('tracing on', () => {
  it('propagates the W3C trace context and never baggage (the SDK\'s default propagator adds W3C Baggage)', () => {
    running = startTracing(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), { serviceName: 'test', createExporter: () => new InMemorySpanExporter() });
    // https://www.w3.org/TR/baggage/: the `baggage` header; a caller's entries must not reach the services we call.
    const withBaggage = propagation.setBaggage(context.active(), propagation.createBaggage({ tenant: { value: 'admin' } }));
    const span = suiteTracer().startSpan('call');
    const carrier: Record<string, string> = {};
    propagation.inject(trace.setSpan(withBaggage, span), carrier);
    span.end();
    expect(Object.keys(carrier)).toEqual(['traceparent']);
    expect(propagation.fields()).toEqual(['traceparent', 'tracestate']);
  });

  it('records spans, exports them with the service name and puts trace ids on log lines', async () => {
    const exporter = new InMemorySpanExporter();
    running = startTracing(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod,team=r%26d' }), {
      serviceName: 'rag-ingest',
      createExporter: (url, protocol) => {
        expect({ url, protocol }).toEqual({ url: 'http://collector:4318/v1/traces', protocol: 'http/protobuf' });
        return exporter;
      },
    });
    const dir = await mkdtemp(join(tmpdir(), 'rag-trace-log-'));
    try {
      const logFile = join(dir, 'log.jsonl');
      const logger = createLogger('info', { format: 'json', destination: logFile });
      const ids = suiteTracer().startActiveSpan('work', (span) => {
        logger.info('inside');
        span.end();
        return span.spanContext();
      });
      logger.info('outside');
      const [inside, outside] = (await readFile(logFile, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(inside).toMatchObject({ trace_id: ids.traceId, span_id: ids.spanId, trace_flags: '01' });
      expect(outside).not.toHaveProperty('trace_id');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    await running.forceFlush();
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('work');
    expect(span?.resource.attributes).toMatchObject({ 'service.name': 'rag-ingest', 'deployment.environment.name': 'prod', team: 'r&d' });
  });

  it('shutting down restores the no-op API', async () => {
    running = startTracing(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/custom' }), { serviceName: 't', createExporter: () => new InMemorySpanExporter() });
    expect(suiteTracer().startSpan('on').isRecording()).toBe(true);
    await running.shutdown();
    running = undefined;
    expect(suiteTracer().startSpan('off').isRecording()).toBe(false);
  });
});

describe('OTEL_* variables', () => {
  it('take the traces endpoint as is, and the base endpoint with /v1/traces', () => {
    expect(tracesEndpoint(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' }))).toBe('http://c:4318/v1/traces');
    expect(tracesEndpoint(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:4318/x' }))).toBe('http://t:4318/x');
    expect(tracesEndpoint(loadConfig({}))).toBeUndefined();
  });

  it('refuse grpc, an unknown sampler and a ratio above 1, naming the variable', () => {
    for (const [name, value] of [['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc'], ['OTEL_TRACES_SAMPLER', 'jaeger_remote'], ['OTEL_TRACES_SAMPLER_ARG', '2'], ['TRACE_TRUST_INCOMING', 'proxy.internal'], ['TRACE_TRUST_INCOMING', '10.0.0.0/33']] as const) {
      let thrown: unknown;
      try {
        loadConfig({ [name]: value });
      } catch (error) {
        thrown = error;
      }
      expect(isRagError(thrown) && thrown.code === 'RAG_CONFIG_INVALID' && thrown.message.includes(name), `${name}=${value}`).toBe(true);
    }
  });

  it('build the spec samplers: parent-based trace id ratio samples about its share of new traces', () => {
    const sampler = samplerOf(loadConfig({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }));
    expect(sampler.toString()).toContain('TraceIdRatioBased{0.1}');
    expect(samplerOf(loadConfig({})).toString()).toContain('AlwaysOnSampler');
  });

  it('parse OTEL_RESOURCE_ATTRIBUTES as percent-encoded pairs, skipping malformed ones', () => {
    expect(parseResourceAttributes('a=1,b=x%20y,broken,=v,c=%E0')).toEqual({ a: '1', b: 'x y' });
  });
});

describe('a collector that is down', () => {
  it('does not fail the shutdown: spans are dropped, the process goes on', async () => {
    const unreachable = startTracing(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), { serviceName: 't' });
    suiteTracer().startSpan('lost').end();
    await expect(unreachable.shutdown()).resolves.toBeUndefined();
  });
});

describe('log lines', () => {
  it('keep their own fields, line after line, with tracing off (the mixin object is merged into)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rag-log-'));
    try {
      const logFile = join(dir, 'log.jsonl');
      const logger = createLogger('info', { format: 'json', destination: logFile });
      logger.info({ uri: 'a.md' }, 'first');
      logger.info({ uri: 'b.md' }, 'second');
      const lines = (await readFile(logFile, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines.map((line) => line.uri)).toEqual(['a.md', 'b.md']);
      expect(lines[0]).not.toHaveProperty('trace_id');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
