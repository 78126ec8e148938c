import { context, isSpanContextValid, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { incomingTrace, suiteTracer, TRUST_NO_CALLER, type IncomingTraceTrust } from '@rag/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { toHttpError } from './error-handler.ts';

/**
 * One SERVER span per request, every route included (/v1, /mcp, probes), continuing the caller's trace
 * only when TRACE_TRUST_INCOMING trusts the peer (incoming-trace-context.ts). Named and described by the
 * HTTP semantic conventions (https://opentelemetry.io/docs/specs/semconv/http/http-spans/#http-server):
 * `{method} {route}` with the route template, http.request.method, http.route, url.path,
 * http.response.status_code; a 5xx is an error and carries the registry's code (rag.error.code).
 * url.path is required there, and "sensitive content provided in url.path SHOULD be scrubbed when
 * instrumentations can identify it": the route's parameters are document names, so url.path is the
 * template with each parameter written REDACTED (the conventions' word for url.full's credentials), and
 * REDACTED alone for a path no route matched. Never the raw path, never the query string.
 *
 * Hooks rather than @opentelemetry/instrumentation-http: that one patches node:http when the module is
 * loaded, which an ESM process needs an --import loader hook for and our esbuild bundle defeats; the
 * hooks work the same under tsx, the bundle, Node 20 and Node 24, and cost nothing without a provider.
 */
const spans = new WeakMap<FastifyRequest, { span: Span; spanContext: Context }>();

export function registerRequestTracing(app: FastifyInstance, trust: IncomingTraceTrust = TRUST_NO_CALLER): void {
  app.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions.url;
    const { parent, links } = incomingTrace(request.headers, request.socket.remoteAddress, trust);
    const span = suiteTracer().startSpan(
      route ? `${request.method} ${route}` : request.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': request.method,
          'url.path': scrubbedPathOf(route),
          'url.scheme': request.protocol,
          ...(route ? { 'http.route': route } : {}),
        },
        links,
      },
      parent,
    );
    // Tracing off: the no-op span has no valid ids and nothing is done. A span sampled out is still made
    // active, so the calls below it stay out of the sample too and pass the decision downstream.
    if (!isSpanContextValid(span.spanContext())) return done();
    spans.set(request, { span, spanContext: trace.setSpan(parent, span) });
    if (!span.isRecording()) return done();
    // 'close' comes after the last byte and after a client left early alike, hijacked replies (/mcp) included.
    reply.raw.once('close', () => {
      const status = reply.raw.statusCode;
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    done();
  });
  // The body is read in the socket's own async context, so the span becomes active only once it is
  // parsed: from here the auth hooks, the handler and everything it awaits run inside it. Binding the
  // response makes its listeners (the onResponse request log line) run inside it too.
  app.addHook('preHandler', (request, reply, done) => {
    const traced = spans.get(request);
    if (!traced) return done();
    context.bind(traced.spanContext, reply.raw);
    context.with(traced.spanContext, done);
  });
  app.addHook('onError', (request, _reply, error, done) => {
    const traced = spans.get(request);
    if (traced) {
      const code = toHttpError(error).code;
      traced.span.setAttributes({ 'error.type': code, 'rag.error.code': code });
    }
    done();
  });
}

/** `/documents/:source` → `/documents/REDACTED`; Fastify's templates mark parameters `:name` and `*`. */
function scrubbedPathOf(route: string | undefined): string {
  if (!route) return 'REDACTED';
  return route.split('/').map((segment) => (segment.startsWith(':') || segment === '*' ? 'REDACTED' : segment)).join('/');
}
