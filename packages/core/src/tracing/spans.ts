import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { isRagError } from '../errors.ts';

/**
 * The tracer of the whole suite, asked of the global API on each use: until a provider is registered
 * (tracing off) it is the no-op tracer, whose spans record nothing. Not kept in a constant: the API's
 * proxy tracer would keep the first provider's tracer after that provider is shut down and replaced.
 */
export function suiteTracer(): Tracer {
  return trace.getTracer('rag-suite');
}

export { SpanKind };

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
}

/** Runs `work` in a child span of the active one; a failure marks the span (rag.error.code) and is rethrown. */
export function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  return suiteTracer().startActiveSpan(name, options, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The synchronous twin of inSpan, for in-process steps (BM25 encoding, prompt building). */
export function inSyncSpan<T>(name: string, options: SpanOptions, work: (span: Span) => T): T {
  return suiteTracer().startActiveSpan(name, options, (span) => {
    try {
      return work(span);
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** error.type and rag.error.code carry the registry's code (never a message: it may quote a server). */
export function markFailed(span: Span, error: unknown): void {
  const code = errorCodeOf(error);
  span.setAttributes({ 'error.type': code, 'rag.error.code': code });
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
}

export function errorCodeOf(error: unknown): string {
  return isRagError(error) ? error.code : 'RAG_INTERNAL';
}

/**
 * A GenAI model call span as the semantic conventions name it, `{gen_ai.operation.name} {gen_ai.request.model}`,
 * of kind CLIENT (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/).
 */
export function modelCallSpan(operation: string, model: string, provider: string | undefined, attributes: Attributes = {}): [string, SpanOptions] {
  return [
    `${operation} ${model}`,
    {
      kind: SpanKind.CLIENT,
      attributes: { 'gen_ai.operation.name': operation, 'gen_ai.request.model': model, ...(provider ? { 'gen_ai.provider.name': provider } : {}), ...attributes },
    },
  ];
}

/**
 * Iterates `source` with `span` active on each step, so that the calls it makes lazily (an async
 * generator's fetch runs on the first next()) are children of the span, and ends the span after the
 * last item, on a failure, or when the consumer stops early.
 */
export async function* inStreamSpan<T>(span: Span, source: (spanContext: Context) => AsyncIterable<T>): AsyncGenerator<T> {
  const spanContext = trace.setSpan(context.active(), span);
  const iterator = context.with(spanContext, () => source(spanContext))[Symbol.asyncIterator]();
  try {
    for (;;) {
      const step = await context.with(spanContext, () => iterator.next());
      if (step.done) return;
      yield step.value;
    }
  } catch (error) {
    markFailed(span, error);
    throw error;
  } finally {
    await iterator.return?.();
    span.end();
  }
}
