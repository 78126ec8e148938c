import rateLimit from '@fastify/rate-limit';
import { RagError } from '@rag/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeys } from './api-keys.ts';
import './caller.ts';

/**
 * Routes that answer without a key: the probes, the Prometheus scrape (counts and durations, no document
 * or query text; see k8s/rag/README.md), the web page's static files, which ask for a key themselves, and
 * the OpenAPI document, which describes the routes and holds no data (clients generate code from it).
 * Every other route, /search, /chat and any added later, needs one: access is denied by default.
 */
export const OPEN_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics', '/', '/app.js', '/vendor/purify.js', '/vendor/marked.js', '/openapi.json']);

/** `Authorization: Bearer <key>`; the scheme is case-insensitive (RFC 7235), the key one token68 (RFC 6750). */
export function bearerKey(header: string | undefined): string | undefined {
  return /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header ?? '')?.[1];
}

function needsKey(request: FastifyRequest): boolean {
  const route = request.routeOptions.url;
  // No route (a 404) holds no data: it answers RAG_NOT_FOUND with or without a key.
  return route !== undefined && !OPEN_ROUTES.has(route);
}

/**
 * Sets `request.caller` on every request: undefined without an auth file. With one, a data route needs a
 * matching key (401 RAG_UNAUTHENTICATED otherwise), then passes a per-key rate limit (429 RAG_RATE_LIMITED).
 */
export function registerAuth(app: FastifyInstance, apiKeys: ApiKeys | undefined): void {
  app.decorateRequest('caller', undefined);
  if (!apiKeys) return;
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!needsKey(request)) return;
    const header = request.headers.authorization;
    const presented = bearerKey(header);
    const caller = presented === undefined ? undefined : apiKeys.match(presented);
    if (caller) {
      request.caller = caller;
      return;
    }
    reply.header('www-authenticate', header === undefined ? 'Bearer realm="rag"' : 'Bearer realm="rag", error="invalid_token"');
    throw new RagError('RAG_UNAUTHENTICATED', header === undefined ? 'The request has no Authorization header.' : 'The key is not valid.');
  });
  // In memory, per replica: the limit holds per pod, so N replicas admit up to N times it behind a Service.
  app.register(rateLimit, {
    global: false,
    timeWindow: apiKeys.windowMs,
    keyGenerator: (request) => request.caller?.name ?? '',
    max: async (_request, name) => apiKeys.limitOf(name),
    // Open routes and failed authentications carry no caller and are not counted.
    allowList: (request) => request.caller === undefined,
    errorResponseBuilder: (request, context) =>
      new RagError('RAG_RATE_LIMITED', `Key "${request.caller?.name}" may send ${context.max} requests a minute; retry in ${context.after}.`),
  });
  // The limiter's hook exists once the plugin has loaded; added after the authentication hook, it runs after it.
  app.after((error) => {
    if (error) throw error;
    app.addHook('onRequest', app.rateLimit());
  });
}
