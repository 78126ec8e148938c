/**
 * A real node:http server on port 0 that records every request and answers from a handler, so the
 * adapters are tested over real sockets (refused connections, hangs, aborted streams included).
 * Test files call `afterEach(closeFakeServers)`.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { probePort } from '../real/free-ports.ts';

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

/** Ports fetch refuses to connect to (undici's `badPorts`), those under 1024. */
const FETCH_BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113,
  115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556,
  563, 587, 601, 636, 989, 990, 993, 995,
]);

/**
 * A URL where nothing listens: a port under 1024 that refuses connections now. The system never hands such a port
 * out for port 0 (ephemeral ports lie above 1024), so no server that a parallel test starts can take it, as it can
 * take a port opened and closed again. Ports that fetch refuses before connecting ("bad port": undici's `badPorts`,
 * lib/web/fetch/constants.js, the Fetch standard's port blocking) are skipped: the client must meet a refused
 * connection.
 */
export async function closedPortUrl(): Promise<string> {
  for (let port = 2; port < 1024; port++) {
    if (!FETCH_BAD_PORTS.has(port) && (await probePort(port)) === 'ECONNREFUSED') return `http://127.0.0.1:${port}`;
  }
  throw new Error('no port under 1024 refuses connections on 127.0.0.1');
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
