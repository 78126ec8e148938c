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
}

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

export function registerHealthRoutes(app: FastifyInstance, checks: ReadinessCheck[]): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const results = Object.fromEntries(await Promise.all(checks.map(runCheck)));
    const failing = Object.entries(results).filter(([, status]) => status !== 'ok');
    if (failing.length === 0) return { status: 'ready', checks: results };
    const [name, code] = failing[0]!;
    const error = new RagError(code as RagError['code'], `Not ready: ${failing.map(([dependency]) => dependency).join(', ')}.`);
    return reply.status(503).send({ ...errorBody(error), dependency: name, checks: results });
  });
}
