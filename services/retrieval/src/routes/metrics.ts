import type { Telemetry } from '@rag/core';
import type { FastifyInstance } from 'fastify';

export function registerMetricsRoute(app: FastifyInstance, telemetry: Telemetry): void {
  app.get('/metrics', async (_request, reply) => {
    return reply.type('text/plain; version=0.0.4; charset=utf-8').send(await telemetry.scrape());
  });
}
