import type { FastifyReply } from 'fastify';

/** An AbortSignal that fires when the client goes away before the answer is sent. */
export function abortOnClientClose(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client closed the request'));
  });
  return controller.signal;
}
