export { startTracing, samplerOf, type StartTracingOptions, type Tracing } from './start-tracing.ts';
export { tracingConfigShape, tracesEndpoint, tracesProtocol, parseResourceAttributes, type TracingConfig } from './tracing-config.ts';
export { inSpan, inSyncSpan, markFailed, errorCodeOf, modelCallSpan, suiteTracer, SpanKind } from './spans.ts';
export { isQueryRecorded } from './query-recording.ts';
export { parseIncomingTraceTrust, TRUST_NO_CALLER, type IncomingTraceTrust } from './incoming-trace-trust.ts';
export { incomingTrace, boundedTraceState, MAX_TRACESTATE_LENGTH, MAX_TRACESTATE_MEMBERS, type IncomingTrace } from './incoming-trace-context.ts';
