import type { Answerer, DocumentOrigin, IncomingTraceTrust, Logger, PassageReader, Retriever, Telemetry } from '@rag/core';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { ApiKeys } from './auth/api-keys.ts';
import { registerAuth, type AddressRateLimit } from './auth/auth-plugin.ts';
import { frameworkErrorOptions, registerErrorHandlers } from './error-handler.ts';
import { registerChatRoute } from './routes/chat.ts';
import { registerDocumentsRoute } from './routes/documents.ts';
import { registerHealthRoutes, type ReadinessCheck } from './routes/health.ts';
import { registerMcpRoute } from './routes/mcp.ts';
import { registerOpenAiRoutes } from './routes/openai-chat.ts';
import { registerOpenApiRoute } from './routes/openapi.ts';
import { registerMetricsRoute } from './routes/metrics.ts';
import { registerSearchRoute } from './routes/search.ts';
import { registerWebRoutes } from './routes/web.ts';
import { registerRequestTracing } from './request-tracing.ts';
import type { OpenGate } from './store-gate.ts';

export interface AppDependencies {
  retriever: Retriever;
  answerer: Answerer;
  /** Documents and passages by source, for MCP's list_sources and get_passage. */
  passages: PassageReader;
  telemetry: Telemetry;
  readinessChecks: ReadinessCheck[];
  /** Awaited by /search and /chat before the pipeline; absent when the caller opened the store itself. */
  storeGate?: OpenGate | undefined;
  defaultK: number;
  logger: Logger;
  /** True once the process drains (SIGTERM): /readyz answers 503 RAG_SHUTTING_DOWN so the pod leaves the Service first. */
  isDraining?: (() => boolean) | undefined;
  /** Facts /readyz reports beside its checks (e.g. the gateway's structured output). */
  readinessDetails?: (() => Record<string, unknown>) | undefined;
  /** RAG_AUTH_FILE's keys: data routes then need `Authorization: Bearer <key>`. Absent: open, `request.caller` undefined. */
  apiKeys?: ApiKeys | undefined;
  /** Default HTTP_TIMEOUTS; shorter in tests. */
  httpTimeouts?: Partial<HttpTimeouts> | undefined;
  /** How long one round of readiness checks answers /readyz (default 1 s; 0 in tests that switch dependencies). */
  readinessCacheMs?: number | undefined;
  /** Where GET /documents/<source> finds originals (RAG_DOCUMENTS_DIR or GCS_BUCKET); absent: RAG_DOCUMENTS_NOT_SERVED. */
  documents?: DocumentOrigin | undefined;
  /** Without apiKeys: RAG_RATE_LIMIT_PER_ADDRESS (server.ts passes it; on by default there). Absent: no limit. */
  addressRateLimit?: AddressRateLimit | undefined;
  /** TRACE_TRUST_INCOMING: whose traceparent is continued; absent: nobody's, every request starts a trace. */
  traceTrust?: IncomingTraceTrust | undefined;
}

export interface HttpTimeouts {
  /** The whole request, headers and body, must arrive within this: 408 RAG_REQUEST_TIMEOUT, connection closed. */
  requestMs: number;
  /** A connection with no byte either way for this long is closed, whatever it is doing. */
  idleMs: number;
  /** A kept-alive connection is closed when no next request starts within this after a response. */
  keepAliveMs: number;
  /** How often Node looks for requests past `requestMs`: a late request is cut at most this much later. */
  checkIntervalMs: number;
}

/**
 * Fastify leaves both timeouts off (0), so a client that sends headers and never the body holds its socket
 * for ever (https://fastify.dev/docs/latest/Reference/Server/#requesttimeout). Bodies are at most 64 KiB:
 * 30 s is generous for them. The idle bound must outlast the longest silent wait of a request, a
 * non-streamed answer from the gateway (GATEWAY_TIMEOUT_MS, 5 min by default), so it is twice that.
 *
 * The keep-alive bound must outlast that of the proxy in front: Google's application load balancers keep
 * backend connections open 600 s and ask backends for more, or a request they send on a connection the
 * backend is closing fails with a 502 (https://cloud.google.com/load-balancing/docs/https/request-distribution,
 * "HTTP keepalive"). Fastify's default is 72 s.
 */
export const HTTP_TIMEOUTS: HttpTimeouts = { requestMs: 30_000, idleMs: 10 * 60_000, keepAliveMs: 620_000, checkIntervalMs: 5_000 };

function outcomeOf(status: number): string {
  if (status < 400) return 'ok';
  if (status === 503 || status === 504) return 'dependency_error';
  return status < 500 ? 'client_error' : 'error';
}

/**
 * Fastify's requestTimeout, connectionTimeout and keepAliveTimeout (Node's server.requestTimeout, server.timeout and server.keepAliveTimeout,
 * https://nodejs.org/api/http.html#serverrequesttimeout), and the check interval that Node takes only at
 * http.createServer (`http` option).
 */
function timeoutOptions(overrides: Partial<HttpTimeouts> = {}) {
  const { requestMs, idleMs, keepAliveMs, checkIntervalMs } = { ...HTTP_TIMEOUTS, ...overrides };
  return { requestTimeout: requestMs, connectionTimeout: idleMs, keepAliveTimeout: keepAliveMs, http: { requestTimeout: requestMs, connectionsCheckingInterval: checkIntervalMs } };
}

/**
 * Fastify's maxParamLength (default 100, https://fastify.dev/docs/latest/Reference/Server/#maxparamlength; set under
 * routerOptions, where Fastify 5 reads router options without a deprecation warning): a longer
 * parameter is routed to "not found", so `/documents/<a gs:// name of 101 characters>` failed. 16 KiB is Node's whole
 * request head (--max-http-header-size, https://nodejs.org/api/cli.html#--max-http-header-sizesize): every name a
 * request can carry reaches the route, which refuses one past its own limit with a coded 414.
 */
const MAX_PARAM_LENGTH = 16 * 1024;

/** The retrieval API, built from ports only: tests wire it with local adapters and real HTTP. */
export function buildApp(deps: AppDependencies): FastifyInstance {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: 64 * 1024,
    disableRequestLogging: true,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    ...timeoutOptions(deps.httpTimeouts),
    ...frameworkErrorOptions,
  });
  // JSON only: any other media type is refused with 415 instead of reaching the routes as a string.
  app.removeContentTypeParser('text/plain');
  // First, so that the server span is active in every later hook (auth, rate limits) and handler.
  registerRequestTracing(app, deps.traceTrust);
  registerErrorHandlers(app);
  registerAuth(app, deps.apiKeys, deps.addressRateLimit);
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unknown';
    deps.telemetry.recordRequest(route, outcomeOf(reply.statusCode));
    // `key` is the key's name from RAG_AUTH_FILE, never the key itself.
    request.log.info({ method: request.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime), key: request.caller?.name }, 'request');
  });
  registerSearchRoute(app, deps);
  registerChatRoute(app, deps);
  registerMcpRoute(app, deps);
  registerOpenAiRoutes(app, deps);
  registerOpenApiRoute(app);
  registerHealthRoutes(app, deps.readinessChecks, { isDraining: deps.isDraining, cacheMs: deps.readinessCacheMs, details: deps.readinessDetails });
  registerMetricsRoute(app, deps.telemetry);
  registerWebRoutes(app);
  registerDocumentsRoute(app, deps);
  return app;
}
