import { RagError } from '@rag/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeys } from './api-keys.ts';
import type { Caller } from './caller.ts';
import { FailedAuthThrottle } from './failed-auth-throttle.ts';
import { AddressRateLimits } from './address-rate-limit.ts';
import { KeyRateLimits, type BudgetState } from './key-rate-limit.ts';

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

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The units a request takes from its key's rate limit, read from the parsed body: a route that sets it
     * is charged once its body is read (preHandler) instead of on arrival. Unset: one unit per request.
     */
    rateLimitCost?: (body: unknown) => number;
  }
}

function needsKey(request: FastifyRequest): boolean {
  const route = request.routeOptions.url;
  // No route (a 404) holds no data: it answers RAG_NOT_FOUND with or without a key.
  return route !== undefined && !OPEN_ROUTES.has(route);
}

/** The per-address limit of an API without keys (RAG_RATE_LIMIT_PER_ADDRESS); 0 requests: none. */
export interface AddressRateLimit {
  perMinute: number;
  /** One minute; shorter in tests only. */
  windowMs?: number | undefined;
}

/**
 * Sets `request.caller` on every request: undefined without an auth file. With one, a data route needs a
 * matching key (401 RAG_UNAUTHENTICATED otherwise; 429 RAG_AUTH_THROTTLED once an address has sent too many
 * wrong keys), then passes a per-key rate limit (429 RAG_RATE_LIMITED). Without one, a data route passes a
 * per-address limit instead (429 RAG_ADDRESS_RATE_LIMITED), when `addressLimit` sets one.
 */
export function registerAuth(app: FastifyInstance, apiKeys: ApiKeys | undefined, addressLimit?: AddressRateLimit): void {
  app.decorateRequest('caller', undefined);
  if (!apiKeys) {
    if (addressLimit && addressLimit.perMinute > 0) registerAddressRateLimit(app, new AddressRateLimits(addressLimit.perMinute, addressLimit.windowMs));
    return;
  }
  const budgets = new KeyRateLimits(apiKeys);
  const failures = new FailedAuthThrottle(apiKeys.windowMs);
  app.addHook('onRequest', async (request, reply) => {
    if (!needsKey(request)) return;
    request.caller = await authenticate(request, reply, apiKeys, failures);
    if (!request.routeOptions.config.rateLimitCost) await charge(request.caller, reply, budgets, 1);
  });
  app.addHook('preHandler', async (request, reply) => {
    const cost = request.routeOptions.config.rateLimitCost;
    if (request.caller && cost) await charge(request.caller, reply, budgets, cost(request.body));
  });
}

async function authenticate(request: FastifyRequest, reply: FastifyReply, apiKeys: ApiKeys, failures: FailedAuthThrottle): Promise<Caller> {
  const header = request.headers.authorization;
  const presented = bearerKey(header);
  const caller = presented === undefined ? undefined : apiKeys.match(presented);
  if (caller) return caller;
  // A request without credentials is no guess; a wrong or malformed one is, and counts against its address.
  const waitSeconds = header === undefined ? undefined : await failures.recordFailure(request.ip);
  if (waitSeconds !== undefined) {
    reply.header('retry-after', waitSeconds);
    throw new RagError('RAG_AUTH_THROTTLED', `Too many wrong API keys from this address; retry in ${waitSeconds} s with a valid key.`);
  }
  reply.header('www-authenticate', header === undefined ? 'Bearer realm="rag"' : 'Bearer realm="rag", error="invalid_token"');
  throw new RagError('RAG_UNAUTHENTICATED', header === undefined ? 'The request has no Authorization header.' : 'The key is not valid.');
}

/** The open API's brake: charged as a key is, on arrival or once the body is read (rateLimitCost). */
function registerAddressRateLimit(app: FastifyInstance, budgets: AddressRateLimits): void {
  const chargeAddress = async (request: FastifyRequest, reply: FastifyReply, cost: number) => {
    const budget = await budgets.charge(request.ip, cost);
    setBudgetHeaders(reply, budget);
    if (budget.allowed) return;
    reply.header('retry-after', budget.resetSeconds);
    throw new RagError('RAG_ADDRESS_RATE_LIMITED', `This address may send ${budget.limit} requests or MCP messages a minute; retry in ${budget.resetSeconds} s.`);
  };
  app.addHook('onRequest', async (request, reply) => {
    if (needsKey(request) && !request.routeOptions.config.rateLimitCost) await chargeAddress(request, reply, 1);
  });
  app.addHook('preHandler', async (request, reply) => {
    const cost = request.routeOptions.config.rateLimitCost;
    if (needsKey(request) && cost) await chargeAddress(request, reply, cost(request.body));
  });
}

/** Takes `cost` units from the caller's budget; past it, 429 RAG_RATE_LIMITED with Retry-After. */
async function charge(caller: Caller, reply: FastifyReply, budgets: KeyRateLimits, cost: number): Promise<void> {
  const budget = await budgets.charge(caller.name, cost);
  setBudgetHeaders(reply, budget);
  if (budget.allowed) return;
  reply.header('retry-after', budget.resetSeconds);
  const asked = cost === 1 ? '' : ` (this request carries ${cost})`;
  throw new RagError('RAG_RATE_LIMITED', `Key "${caller.name}" may send ${budget.limit} requests or MCP messages a minute${asked}; retry in ${budget.resetSeconds} s.`);
}

/** The de-facto X-RateLimit-* headers, as @fastify/rate-limit sent them before. */
function setBudgetHeaders(reply: FastifyReply, budget: BudgetState): void {
  reply.header('x-ratelimit-limit', budget.limit);
  reply.header('x-ratelimit-remaining', budget.remaining);
  reply.header('x-ratelimit-reset', budget.resetSeconds);
}
