/**
 * SIGTERM to the real server process, as Kubernetes sends it to a pod it stops: the answer being
 * streamed finishes, new connections are refused, and the process exits 0 within SHUTDOWN_TIMEOUT_MS.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@rag/core';
import { LanceDbStore } from '@rag/core/embedded';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeFakeServers, startFakeServer, within } from '../../../packages/core/test/adapters/fake-server.ts';
import { SlowGateway } from './fakes/slow-gateway.ts';
import { handbookFolder, ingestFolder } from './test-stack.ts';

const repositoryRoot = new URL('../../../', import.meta.url).pathname;
const REMOTE_WORK = 'How many days a week can I work from home?';

let dataDir: string;
const servers: ServerProcess[] = [];

beforeAll(async () => {
  // The handbook indexed where the server will look for it: RAG_DATA_DIR, collection docs-v2, BM25 only.
  dataDir = await mkdtemp(join(tmpdir(), 'rag-shutdown-'));
  const store = new LanceDbStore({ dataDir, collection: 'docs-v2' });
  await store.open(null);
  await ingestFolder(handbookFolder, store, undefined, createLogger('silent'));
  await store.close();
});

afterEach(async () => {
  for (const server of servers.splice(0)) if (server.child.exitCode === null) server.child.kill('SIGKILL');
  await closeFakeServers();
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  port: number;
  output: { text: string };
  exited: Promise<{ code: number | null; at: number }>;
}

/** The real server, started with plain node (no pnpm in between to swallow the signal), on a free port. */
async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/retrieval/src/server.ts'], {
    cwd: repositoryRoot,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', RAG_DATA_DIR: dataDir, LANCEDB_LOG: 'error', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { text: '' };
  child.stdout!.on('data', (data: Buffer) => (output.text += data.toString()));
  child.stderr!.on('data', (data: Buffer) => (output.text += data.toString()));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.once('exit', (code) => resolve({ code, at: performance.now() })));
  const server = { child, output, exited, baseUrl: '', port: 0 };
  servers.push(server);
  const listening = new Promise<number>((resolve, reject) => {
    const onData = () => {
      const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output.text)?.[1];
      if (port) resolve(Number(port));
    };
    child.stdout!.on('data', onData);
    void exited.then(({ code }) => reject(new Error(`server exited with ${code}:\n${output.text}`)));
  });
  server.port = await within(listening, 30_000);
  server.baseUrl = `http://127.0.0.1:${server.port}`;
  return server;
}

/** A streamed /chat: resolves `firstToken` once a token arrived, `frames` with everything the client got. */
function startStream(baseUrl: string) {
  let markFirstToken!: () => void;
  const firstToken = new Promise<void>((resolve) => (markFirstToken = resolve));
  const frames = (async () => {
    const response = await fetch(`${baseUrl}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: REMOTE_WORK }),
    });
    expect(response.status).toBe(200);
    let text = '';
    try {
      for await (const part of response.body!.pipeThrough(new TextDecoderStream())) {
        text += part;
        if (text.includes('event: token')) markFirstToken();
      }
    } catch {
      // A stream cut by the server ends the body with an error: what was received is what counts.
    }
    return [...text.matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map((match) => ({ event: match[1]!, data: JSON.parse(match[2]!) }));
  })();
  return { firstToken, frames };
}

/** GET over a new connection: the status, or the connection error's code. */
function getOnNewConnection(port: number, path: string): Promise<number | string> {
  return new Promise((resolve) => {
    const outgoing = request({ host: '127.0.0.1', port, path, agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode!);
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    outgoing.end();
  });
}

describe('SIGTERM to the server during a streamed /chat answer', () => {
  it('refuses new connections, finishes the stream with its done event, and exits 0', async () => {
    const gateway = await startFakeServer(new SlowGateway({ tokenDelayMs: 150 }).handle);
    const server = await startServer({ GATEWAY_URL: gateway.url, SHUTDOWN_TIMEOUT_MS: '20000' });
    expect(await getOnNewConnection(server.port, '/readyz')).toBe(200);
    const stream = startStream(server.baseUrl);
    await within(stream.firstToken, 10_000);

    server.child.kill('SIGTERM');
    await within(waitFor(() => server.output.text.includes('draining')), 5_000);

    // The listener is closed at once: a kubelet probe or a new client gets "connection refused", which
    // takes the pod out of the Service as surely as a 503 from /readyz would.
    expect(await getOnNewConnection(server.port, '/readyz')).toBe('ECONNREFUSED');
    const frames = await within(stream.frames, 10_000);
    expect(frames.at(-1)?.event).toBe('done');
    // The system cites the sentence the model left uncited.
    expect(frames.at(-1)?.data.answer).toMatch(/^Up to three days a week from home \[onboarding\.md#\d+\]\. Thanks\.$/);
    expect((await within(server.exited, 10_000)).code, server.output.text).toBe(0);
    expect(server.output.text).toContain('"msg":"shut down"');
    expect(server.output.text).not.toContain('still open');
  });

  it('cuts a stream that outlives SHUTDOWN_TIMEOUT_MS, says how many requests were cut, and still exits 0 within the bound', async () => {
    const gateway = await startFakeServer(new SlowGateway({ tokenDelayMs: 50, neverFinish: true }).handle);
    const server = await startServer({ GATEWAY_URL: gateway.url, SHUTDOWN_TIMEOUT_MS: '500' });
    const stream = startStream(server.baseUrl);
    await within(stream.firstToken, 10_000);

    const signalled = performance.now();
    server.child.kill('SIGTERM');
    const { code, at } = await within(server.exited, 10_000);

    expect(code, server.output.text).toBe(0);
    expect(at - signalled).toBeLessThan(500 + 2_000); // the bound, plus closing the store and the process's exit
    expect(server.output.text).toContain('SHUTDOWN_TIMEOUT_MS (500 ms) reached with 1 request still open');
    const frames = await within(stream.frames, 5_000);
    expect(frames.map((frame) => frame.event)).not.toContain('done');
    await within(gateway.requests.at(-1)!.clientGone, 5_000); // the cut stream stopped asking the gateway
  });

  it('exits at once, non-zero, on a second signal during the drain', async () => {
    const gateway = await startFakeServer(new SlowGateway({ tokenDelayMs: 50, neverFinish: true }).handle);
    const server = await startServer({ GATEWAY_URL: gateway.url, SHUTDOWN_TIMEOUT_MS: '60000' });
    const stream = startStream(server.baseUrl);
    await within(stream.firstToken, 10_000);

    server.child.kill('SIGTERM');
    await within(waitFor(() => server.output.text.includes('draining')), 5_000);
    server.child.kill('SIGTERM');

    expect((await within(server.exited, 5_000)).code).toBe(128 + 15);
    expect(server.output.text).toContain('SIGTERM again during the drain: exiting now');
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}
