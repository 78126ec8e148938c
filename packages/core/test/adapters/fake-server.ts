/**
 * A real node:http server on port 0 that records every request and answers from a handler, so the
 * adapters are tested over real sockets (refused connections, hangs, aborted streams included).
 * Test files call `afterEach(closeFakeServers)`.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path with the query string, as sent. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body; the raw text when it is not JSON; undefined when empty. */
  body: unknown;
  /** Settles when the client closed the connection before the answer was complete. */
  clientGone: Promise<void>;
}

export type Handler = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

export interface FakeServer {
  url: string;
  requests: RecordedRequest[];
  /** The node:http server itself, for tests that stop and restart it on the same port. */
  server: Server;
}

const servers = new Set<Server>();

export async function startFakeServer(handler: Handler): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer(async (incoming, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    let markGone!: () => void;
    const clientGone = new Promise<void>((resolve) => (markGone = resolve));
    response.on('close', () => {
      if (!response.writableFinished) markGone();
    });
    const request: RecordedRequest = {
      method: incoming.method ?? '',
      path: incoming.url ?? '',
      headers: incoming.headers,
      body: parseBody(Buffer.concat(chunks).toString('utf8')),
      clientGone,
    };
    requests.push(request);
    try {
      await handler(request, response);
    } catch (error) {
      sendJson(response, 500, { error: `fake server handler failed: ${String(error)}` });
    }
  });
  servers.add(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests, server };
}

export async function closeFakeServers(): Promise<void> {
  const closing = [...servers].map(
    (server) =>
      new Promise<void>((resolve) => {
        server.closeAllConnections(); // hanging requests must not keep the test alive
        server.close(() => resolve());
      }),
  );
  servers.clear();
  await Promise.all(closing);
}

/** A URL where nothing listens: a port we opened and closed again. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

/** Answers nothing until the client gives up (the server is closed after each test). */
export function hang(): void {}

/** Resolves when `promise` does, or fails the test after `ms`: a "did not hang" bound, not a timing claim. */
export function within<T>(promise: Promise<T>, ms = 5_000): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms).unref()),
  ]);
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
