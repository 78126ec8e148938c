export { startTracing, samplerOf, type StartTracingOptions, type Tracing } from './start-tracing.ts';
export { tracingConfigShape, tracesEndpoint, tracesProtocol, parseResourceAttributes, type TracingConfig } from './tracing-config.ts';
export { inSpan, inSyncSpan, markFailed, errorCodeOf, modelCallSpan, suiteTracer, SpanKind } from './spans.ts';
export { isQueryRecorded } from './query-recording.ts';
