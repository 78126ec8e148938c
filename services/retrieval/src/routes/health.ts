import { RagError, toRagError } from '@rag/core';
import type { FastifyInstance } from 'fastify';
import { errorBody } from '../error-handler.ts';

export interface ReadinessCheck {
  /** The dependency, as /readyz names it: store, embed, rerank, gateway. */
  name: string;
  check: (signal: AbortSignal) => Promise<void>;
}

const READINESS_TIMEOUT_MS = 3000;

async function runCheck(check: ReadinessCheck): Promise<[string, string]> {
  try {
    await check.check(AbortSignal.timeout(READINESS_TIMEOUT_MS));
    return [check.name, 'ok'];
  } catch (error) {
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
