/**
 * GET /documents/<source> over a folder whose files change while they are served (issue 43, finding 1, and the
 * /documents mutations of its item 7): real files, the real app on port 0, a raw kept-alive connection where the
 * bytes on the wire matter.
 */
import { connect, type Socket } from 'node:net';
import { appendFile, cp, mkdir, mkdtemp, readFile, rename, rm, symlink, truncate, unlink, utimes, writeFile } from 'node:fs/promises';
import * as realFs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, FolderDocuments, QdrantStore, type DocumentOrigin } from '@rag/core';
import type { Converter } from '@rag/core/ingestion';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { closeFakeServers, startFakeServer } from '../../../packages/core/test/adapters/fake-server.ts';
import { FakeQdrant } from './fakes/fake-qdrant.ts';
import { handbookFolder, ingestFolder, startTestStack, type TestStack } from './test-stack.ts';

/**
 * FolderDocuments opens through node:fs/promises' `open`: a test can run a step just before and just after the
 * open of one path, the window in which a path is swapped under a request. Every other open is the real one.
 */
const around = vi.hoisted(() => ({ path: undefined as string | undefined, before: async () => {}, after: async () => {} }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  const open = async (...args: Parameters<typeof actual.open>) => {
    if (around.path === undefined || args[0] !== around.path) return actual.open(...args);
    await around.before();
    try {
      return await actual.open(...args);
    } finally {
      await around.after();
    }
  };
  return { ...actual, default: { ...actual, open }, open };
});

/** A log a writer appends to: its text for the index is one line, whatever its size, so a large one ingests at once. */
const logConverter: Converter = { extensions: ['log'], toMarkdown: async () => '# Server log\n\nA log that a writer appends to.\n' };

/** Past what the kernel buffers on a loopback connection (tcp_wmem and tcp_rmem at most 4 and 6 MiB): the send is still going when the file changes. */
const LARGE = 32 * 1024 * 1024;
const INJECTED = 'HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\nINJECTED-RESPONSE!!\n';

const INDEXED_MTIME = new Date('2026-11-02T09:30:00Z');

let root: string;
let folder: string;
let stack: TestStack;
let changing: TestStack;
/** What the origin of `changing` does between opening a file and handing it over. */
let betweenOpenAndSend: (path: string) => Promise<void> = async () => {};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rag-documents-changing-'));
  folder = join(root, 'corpus');
  await cp(handbookFolder, folder, { recursive: true });
  await writeFile(join(folder, '.rag-access.yaml'), 'rules:\n  - {path: "ops/**", groups: [oncall]}\n');
  await mkdir(join(folder, 'pub'));
  await writeFile(join(folder, 'pub', 'swap.md'), '# Swap\n\nA public page about rotas.\n');
  for (const name of ['grows.log', 'shrinks.log', 'rewritten.log']) await writeFile(join(folder, name), Buffer.alloc(LARGE, 'a'));
  // Whole seconds, which utimes can set back exactly: a test that edits a file can restore the indexed version.
  for (const name of ['backups.md', 'onboarding.md']) await utimes(join(folder, name), INDEXED_MTIME, INDEXED_MTIME);
  const origin = new FolderDocuments(folder);
  const wrapped: DocumentOrigin = {
    locate: async (source) => {
      const location = await origin.locate(source);
      if (location.kind === 'file') await betweenOpenAndSend(location.path);
      return location;
    },
  };
  stack = await startTestStack({ folder, documents: origin, converters: [logConverter] });
  changing = await startTestStack({ folder, documents: wrapped, converters: [logConverter] });
});

afterAll(async () => {
  await stack?.close();
  await changing?.close();
  await rm(root, { recursive: true, force: true });
});

/** A raw HTTP/1.1 connection: requests written as bytes, everything the server sends kept as it came. */
class RawConnection {
  readonly socket: Socket;
  readonly closed: Promise<void>;
  private chunks: Buffer[] = [];
  /** How many bytes came so far. */
  length = 0;

  constructor(baseUrl: string) {
    const { hostname, port } = new URL(baseUrl);
    this.socket = connect(Number(port), hostname);
    this.socket.on('data', (data: Buffer) => {
      this.chunks.push(data);
      this.length += data.length;
    });
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
    this.socket.on('error', () => undefined);
  }

  /** Everything received so far, in one buffer. */
  get received(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  get(path: string): void {
    this.socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n`);
  }

  /** The head of the response starting at `offset`, once it is whole. */
  async head(offset = 0, timeoutMs = 10_000): Promise<{ status: number; contentLength: number; bodyStart: number }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const received = this.received;
      const end = received.indexOf('\r\n\r\n', offset);
      if (end >= 0) {
        const head = received.subarray(offset, end).toString('latin1');
        return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), contentLength: Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]), bodyStart: end + 4 };
      }
      if (Date.now() > deadline || this.socket.destroyed) throw new Error(`no response head at ${offset}: ${this.received.subarray(offset, offset + 200).toString('latin1')}`);
      await sleep(5);
    }
  }

  /** Waits until `length` bytes are there, the connection closes, or `timeoutMs` passes; true when they are there. */
  async until(length: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.length < length && !this.socket.destroyed && Date.now() < deadline) await sleep(10);
    return this.length >= length;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('GET /documents/<source> while the file changes', () => {
  it('sends no byte past Content-Length from a file appended to while it is sent slowly, and answers the next request on the connection itself', async () => {
    const path = join(folder, 'grows.log');
    const connection = new RawConnection(stack.baseUrl);
    try {
      connection.get('/documents/grows.log');
      const first = await connection.head();
      expect(first.status).toBe(200);
      expect(first.contentLength).toBe(LARGE);
      // A slow reader: the server's stream waits on the full buffers, far from the file's end, when the attacker appends.
      connection.socket.pause();
      await sleep(300);
      await appendFile(path, INJECTED);
      connection.socket.resume();
      const firstEnd = first.bodyStart + first.contentLength;
      expect(await connection.until(firstEnd, 20_000)).toBe(true);
      await sleep(200);
      // Nothing of the file past what was announced: the next bytes on the connection are the next answer's.
      expect(connection.length).toBe(firstEnd);
      expect(connection.received.subarray(first.bodyStart, firstEnd).every((byte) => byte === 0x61)).toBe(true);
      connection.get('/documents/backups.md');
      const second = await connection.head(firstEnd);
      expect(second.status).toBe(200);
      const backups = await readFile(join(folder, 'backups.md'));
      expect(second.contentLength).toBe(backups.length);
      expect(await connection.until(second.bodyStart + second.contentLength, 10_000)).toBe(true);
      expect(connection.received.subarray(second.bodyStart).equals(backups)).toBe(true);
      expect(connection.received.includes('INJECTED-RESPONSE')).toBe(false);
    } finally {
      connection.socket.destroy();
      await truncate(path, LARGE);
    }
  });

  it('closes the connection, instead of leaving the client waiting, when the file shrinks while it is sent', async () => {
    const path = join(folder, 'shrinks.log');
    const connection = new RawConnection(stack.baseUrl);
    try {
      connection.get('/documents/shrinks.log');
      const first = await connection.head();
      expect(first.status).toBe(200);
      expect(first.contentLength).toBe(LARGE);
      connection.socket.pause();
      await sleep(300);
      await truncate(path, 1024 * 1024);
      connection.socket.resume();
      // The server cannot send what it announced: the connection must end, soon, short of Content-Length.
      const closedInTime = await Promise.race([connection.closed.then(() => true), sleep(10_000).then(() => false)]);
      expect(closedInTime).toBe(true);
      expect(connection.length).toBeLessThan(first.bodyStart + first.contentLength);
    } finally {
      connection.socket.destroy();
    }
  }, 30_000);

  it('closes the connection short of Content-Length when the file is rewritten in place (same size) while it is sent', async () => {
    const path = join(folder, 'rewritten.log');
    const connection = new RawConnection(stack.baseUrl);
    try {
      connection.get('/documents/rewritten.log');
      const first = await connection.head();
      expect(first.contentLength).toBe(LARGE);
      connection.socket.pause();
      await sleep(300);
      // A writer that rewrites the file where it stands: the size is the same, the bytes and the modification time are not.
      await writeFile(path, Buffer.alloc(LARGE, 'b'), { flag: 'r+' });
      connection.socket.resume();
      const closedInTime = await Promise.race([connection.closed.then(() => true), sleep(10_000).then(() => false)]);
      expect(closedInTime).toBe(true);
      expect(connection.length).toBeLessThan(first.bodyStart + first.contentLength);
    } finally {
      connection.socket.destroy();
    }
  }, 30_000);

  it('refuses a file that is no longer the indexed version: 409 RAG_DOCUMENT_CHANGED', async () => {
    const path = join(folder, 'onboarding.md');
    const original = await readFile(path);
    const mtime = INDEXED_MTIME;
    try {
      expect((await fetch(`${stack.baseUrl}/documents/onboarding.md`)).status).toBe(200);
      await appendFile(path, '\nAn edit made after the ingest.\n');
      const refused = await fetch(`${stack.baseUrl}/documents/onboarding.md`);
      expect(refused.status).toBe(409);
      const body = (await refused.json()) as { error: { code: string } };
      expect(body.error.code).toBe('RAG_DOCUMENT_CHANGED');
      // The same size with another modification time is another version too.
      await writeFile(path, original);
      expect((await fetch(`${stack.baseUrl}/documents/onboarding.md`)).status).toBe(409);
      // Back to the indexed version exactly: served again.
      await utimes(path, mtime, mtime);
      expect((await fetch(`${stack.baseUrl}/documents/onboarding.md`)).status).toBe(200);
    } finally {
      await writeFile(path, original);
      await utimes(path, mtime, mtime);
    }
  });

  it('refuses a file that changed between its open and its sending: 409 RAG_DOCUMENT_CHANGED, for a whole file or a range', async () => {
    const path = join(folder, 'backups.md');
    const original = await readFile(path);
    const mtime = INDEXED_MTIME;
    betweenOpenAndSend = async (opened) => {
      if (opened === path) await appendFile(path, INJECTED);
    };
    try {
      for (const headers of [{}, { range: 'bytes=0-9' }] as Array<Record<string, string>>) {
        const refused = await fetch(`${changing.baseUrl}/documents/backups.md`, { headers });
        expect(refused.status, JSON.stringify(headers)).toBe(409);
        expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('RAG_DOCUMENT_CHANGED');
        await writeFile(path, original);
        await utimes(path, mtime, mtime);
      }
    } finally {
      betweenOpenAndSend = async () => {};
      await writeFile(path, original);
      await utimes(path, mtime, mtime);
    }
    expect((await fetch(`${changing.baseUrl}/documents/backups.md`)).status).toBe(200);
  });

  /** RFC 9110 §13.1.5: a server that sends no validator cannot match an If-Range, so the whole file is the answer. */
  it('ignores a Range sent with If-Range: 200 and the whole file', async () => {
    const whole = await readFile(join(folder, 'backups.md'), 'utf8');
    for (const validator of ['"some-etag"', 'Sat, 05 Dec 2026 07:00:00 GMT']) {
      const answer = await fetch(`${stack.baseUrl}/documents/backups.md`, { headers: { range: 'bytes=0-9', 'if-range': validator } });
      expect(answer.status, validator).toBe(200);
      expect(answer.headers.get('content-range')).toBeNull();
      expect(await answer.text()).toBe(whole);
    }
  });
});

describe('GET /documents/<source> when the path is swapped during the request', () => {
  const swap = () => join(folder, 'pub', 'swap.md');
  const aside = () => join(root, 'swap.md.aside');

  async function restore(original: Buffer): Promise<void> {
    around.path = undefined;
    around.before = async () => {};
    around.after = async () => {};
    await rm(swap(), { force: true });
    await writeFile(swap(), original);
  }

  it('never opens through a link: one put at the path just for the open, then replaced by a hard link to the same file, is refused', async () => {
    // Without O_NOFOLLOW the open follows the link to the restricted file; a hard link to that file then stands at
    // the path, with no link in it and the same inode as the handle, and every later check passes.
    const original = await readFile(swap());
    const restricted = join(folder, 'ops', 'alerts.md');
    around.path = swap();
    around.before = async () => {
      await unlink(swap());
      await symlink('../ops/alerts.md', swap());
    };
    around.after = async () => {
      await unlink(swap());
      await realFs.link(restricted, swap());
    };
    try {
      await expect(new FolderDocuments(folder).locate('pub/swap.md')).rejects.toMatchObject({ code: 'RAG_DOCUMENT_NOT_FOUND' });
    } finally {
      await restore(original);
    }
  });

  it('refuses a handle on another file than the path names: a file renamed into place for the open, the original renamed back after it', async () => {
    // The path holds the restricted file while it is opened, and the public one again when it is checked: no link
    // anywhere, so only the handle's inode, compared with the path's, tells them apart.
    const original = await readFile(swap());
    const secret = join(root, 'secret.md');
    await writeFile(secret, '# Salaries\n\nNot for the public group.\n');
    around.path = swap();
    around.before = async () => {
      await rename(swap(), aside());
      await rename(secret, swap());
    };
    around.after = async () => {
      await rename(swap(), secret);
      await rename(aside(), swap());
    };
    try {
      await expect(new FolderDocuments(folder).locate('pub/swap.md')).rejects.toMatchObject({ code: 'RAG_DOCUMENT_NOT_FOUND' });
      const refused = await fetch(`${stack.baseUrl}/documents/${encodeURIComponent('pub/swap.md')}`);
      expect(refused.status).toBe(404);
      expect(await refused.text()).not.toContain('Salaries');
    } finally {
      await restore(original);
    }
  });
});

describe("the indexed version GET /documents compares the file with", () => {
  it('is the ingested file\'s modification time and size, read back from LanceDB and from Qdrant alike; undefined for a source not indexed', async () => {
    const path = join(folder, 'ops', 'alerts.md');
    const info = await realFs.stat(path);
    const version = `${info.mtimeMs}:${info.size}`;
    expect(await stack.store.sourceVersionOf('ops/alerts.md')).toBe(version);
    expect(await stack.store.sourceVersionOf('nowhere.md')).toBeUndefined();
    const qdrant = new FakeQdrant();
    try {
      const server = await startFakeServer(qdrant.handle);
      const store = new QdrantStore({ url: server.url, collection: 'docs' });
      await store.open(null);
      await ingestFolder(folder, store, undefined, createLogger('silent'), [logConverter]);
      expect(await store.sourceVersionOf('ops/alerts.md')).toBe(version);
      expect(await store.sourceVersionOf('nowhere.md')).toBeUndefined();
    } finally {
      await closeFakeServers();
    }
  });
});
