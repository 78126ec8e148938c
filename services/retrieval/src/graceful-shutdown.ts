import type { ServerResponse } from 'node:http';
import { constants } from 'node:os';
import type { Logger } from '@rag/core';
import type { FastifyInstance } from 'fastify';

export interface GracefulShutdownOptions {
  /** How long requests in flight may take to finish once a signal came (SHUTDOWN_TIMEOUT_MS). */
  timeoutMs: number;
  logger: Logger;
  /** What the process holds besides the app (the store, telemetry), closed once the app is. */
  closeResources: () => Promise<void>;
}

type StopSignal = 'SIGTERM' | 'SIGINT';

/**
 * Stops the API the way Kubernetes expects on SIGTERM: /readyz answers 503 at once (through
 * `isDraining`), the listener closes so new connections are refused, requests in flight finish (up to
 * `timeoutMs`), idle keep-alive connections close, then the app and the resources close and the
 * process exits 0. A second signal exits at once with 128 + the signal's number.
 *
 * Requests are counted here, from `onRequest` to their response's `close`, because a streamed /chat
 * answer is a hijacked reply: Fastify does not track it, and its `close()` waits for it only through
 * Node's `server.close()`, which waits for every connection with no bound and cannot say how many it
 * cut. `app.close()` runs only after the drain, since from its first moment Fastify answers every
 * request, /readyz included, with a bare 503 (`return503OnClosing`) instead of RAG_SHUTTING_DOWN.
 */
export class GracefulShutdown {
  private draining = false;
  private readonly inFlight = new Set<ServerResponse>();
  private onSettled: (() => void) | undefined;

  constructor(private readonly options: GracefulShutdownOptions) {}

  readonly isDraining = (): boolean => this.draining;

  /** Counts the app's requests and drains it on SIGTERM and SIGINT. Call before `listen`. */
  attach(app: FastifyInstance): void {
    app.addHook('onRequest', async (_request, reply) => {
      const response = reply.raw;
      this.inFlight.add(response);
      // A request that arrives on a kept-alive connection during the drain is served, then its connection closed.
      if (this.draining) reply.header('connection', 'close');
      response.once('close', () => this.settle(app, response));
    });
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => this.onSignal(app, signal));
  }

  private onSignal(app: FastifyInstance, signal: StopSignal): void {
    if (this.draining) {
      this.options.logger.warn({ signal, openRequests: this.inFlight.size }, `${signal} again during the drain: exiting now`);
      process.exit(128 + constants.signals[signal]);
    }
    this.draining = true;
    this.drain(app, signal).then(
      () => process.exit(0),
      // A close that fails must still end the process, and say why, rather than leave it half shut.
      (error: unknown) => {
        this.options.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  }

  private async drain(app: FastifyInstance, signal: StopSignal): Promise<void> {
    const { logger, timeoutMs } = this.options;
    logger.info({ signal, openRequests: this.inFlight.size, timeoutMs }, 'draining: /readyz answers 503, no new connections');
    // Node's close also closes the idle keep-alive connections; the busy ones close as their response ends.
    if (app.server.listening) app.server.close();
    app.server.closeIdleConnections();
    // Answers not started yet tell their client not to reuse the connection.
    for (const response of this.inFlight) if (!response.headersSent) response.setHeader('connection', 'close');
    if (!(await this.settledWithin(timeoutMs))) {
      const open = this.inFlight.size;
      logger.warn({ openRequests: open, timeoutMs }, `SHUTDOWN_TIMEOUT_MS (${timeoutMs} ms) reached with ${open} request${open === 1 ? '' : 's'} still open: cutting ${open === 1 ? 'it' : 'them'}`);
    }
    // What is left goes now: requests over the bound, and connections still sending a request's headers,
    // which Node's close would otherwise wait for until its headers timeout.
    app.server.closeAllConnections();
    await app.close();
    await this.options.closeResources();
    logger.info({ signal }, 'shut down');
  }

  private settle(app: FastifyInstance, response: ServerResponse): void {
    this.inFlight.delete(response);
    if (!this.draining) return;
    // The connection of a finished response is idle now: close it rather than wait for the client.
    app.server.closeIdleConnections();
    if (this.inFlight.size === 0) this.onSettled?.();
  }

  private settledWithin(timeoutMs: number): Promise<boolean> {
    if (this.inFlight.size === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.onSettled = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  }
}
