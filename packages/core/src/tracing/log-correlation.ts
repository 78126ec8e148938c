import { isSpanContextValid, trace } from '@opentelemetry/api';

/**
 * A pino mixin: the active span's ids on every log line written inside it, under the names Cloud
 * Logging and the OpenTelemetry log data model use (trace_id, span_id, trace_flags), so a log line
 * leads to its trace. Tracing off: no span is ever active and nothing is added. A new object each time:
 * pino merges the line's own fields into the one the mixin returns.
 */
export function traceLogFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const spanContext = span.spanContext();
  if (!isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId, trace_flags: `0${spanContext.traceFlags.toString(16)}` };
}
