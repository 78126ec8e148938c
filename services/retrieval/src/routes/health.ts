import { RagError, toRagError, type ErrorCode } from '@rag/core';
import type { FastifyInstance } from 'fastify';
import { errorBody } from '../error-handler.ts';

export interface ReadinessCheck {
  /** The dependency, as /readyz names it: store, embed, rerank, gateway. */
  name: string;
  check: (signal: AbortSignal) => Promise<void>;
  /**
   * Reported when the check outlives the readiness deadline: the adapters would otherwise call their
   * aborted signal a closed client, which names nothing.
   */
  timeoutCode?: ErrorCode;
  /**
   * True for a dependency /search can do without (the reranker, the gateway): its failure leaves the
   * pod ready and /readyz reports it degraded. Unset, a failure fails /readyz with a 503.
   */
  optional?: boolean;
}

export interface HealthRouteOptions {
  /** True once the process is draining (SIGTERM): /readyz answers 503 RAG_SHUTTING_DOWN at once. */
  isDraining?: (() => boolean) | undefined;
  /** How long one round of checks answers /readyz (default READINESS_CACHE_MS; 0 checks on every call). */
  cacheMs?: number | undefined;
  /** Facts reported beside the checks as `details`, e.g. `{gateway: {structured_output: "json_schema"}}`. */
  details?: (() => Record<string, unknown>) | undefined;
}

/**
 * /readyz needs no key and each call reaches every dependency: without a cache, a loop of unauthenticated
 * probes becomes as many calls to Qdrant, TEI and the gateway. Kubelet probes every few seconds, so a
 * second-old answer changes nothing for it.
 */
export const READINESS_CACHE_MS = 1000;

const READINESS_TIMEOUT_MS = 3000;

async function runCheck(check: ReadinessCheck): Promise<[string, string]> {
  const deadline = AbortSignal.timeout(READINESS_TIMEOUT_MS);
  try {
    await check.check(deadline);
    return [check.name, 'ok'];
  } catch (error) {
    if (deadline.aborted && check.timeoutCode) return [check.name, check.timeoutCode];
    return [check.name, toRagError(error).code];
  }
}

/**
 * /readyz answers "can this pod serve /search?": only checks not marked optional fail it. A reranker or gateway
 * outage leaves every pod in the Service (/search degrades to the fused ranking, /chat names the
 * gateway), instead of emptying the Service and turning named 503s into refused connections.
 */
export function registerHealthRoutes(app: FastifyInstance, checks: ReadinessCheck[], options: HealthRouteOptions = {}): void {
  const checkAll = sharedRecent(options.cacheMs ?? READINESS_CACHE_MS, async () => Object.fromEntries(await Promise.all(checks.map(runCheck))) as Record<string, string>);
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    if (options.isDraining?.()) return reply.status(503).send(errorBody(new RagError('RAG_SHUTTING_DOWN')));
    const results = await checkAll();
    const failing = checks.filter((check) => results[check.name] !== 'ok');
    const blocking = failing.filter((check) => !check.optional).map((check) => check.name);
    if (blocking.length > 0) {
      const dependency = blocking[0]!;
      const error = new RagError(results[dependency] as ErrorCode, `Not ready: ${blocking.join(', ')}.`);
      // Built here, not by errorBody: this detail names checks, not endpoints, and is the point of the answer.
      return reply.status(503).send({ error: { code: error.code, message: error.message }, dependency, checks: results });
    }
    const details = options.details ? { details: options.details() } : {};
    if (failing.length === 0) return { status: 'ready', checks: results, ...details };
    return { status: 'degraded', checks: results, degraded: failing.map((check) => check.name), ...details };
  });
}

/**
 * One run of `work` for every caller that arrives while it runs and for `ttlMs` after it settles: concurrent
 * callers share the run in flight, later ones its result until it is older than `ttlMs`.
 */
function sharedRecent<T>(ttlMs: number, work: () => Promise<T>): () => Promise<T> {
  let latest: { result: Promise<T>; settledAt?: number } | undefined;
  return () => {
    const settledAt = latest?.settledAt;
    if (latest && (settledAt === undefined || performance.now() - settledAt < ttlMs)) return latest.result;
    const run: { result: Promise<T>; settledAt?: number } = { result: work() };
    void run.result.finally(() => (run.settledAt = performance.now())).catch(() => undefined);
    latest = run;
    return run.result;
  };
}
