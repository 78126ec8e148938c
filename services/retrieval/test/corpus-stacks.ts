/**
 * For tests that check one behaviour in both stores over a corpus folder they write: the folder's
 * lifetime, the two stacks (the embedded LanceDB one and the production one on the fake Qdrant) and a
 * stack with an MCP client. Each `use…` registers its own beforeAll/afterAll in the calling suite.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll } from 'vitest';
import { startProductionStack } from './production-stack.ts';
import { startTestStack } from './test-stack.ts';

interface Stack {
  baseUrl: string;
  close(): Promise<void>;
}

/** A stack started before the suite's tests: its URL is read once it is up. */
export interface LiveStack {
  readonly baseUrl: string;
}

const START_MS = 60_000;

/** A temporary folder that `write` fills before the file's tests, removed after them; call the result for its path. */
export function useCorpusFolder(prefix: string, write: (folder: string) => Promise<void>): () => string {
  let folder = '';
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), prefix));
    await write(folder);
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });
  return () => folder;
}

/** Both stores over the folder, for describe.each: [name, start]. */
export function storesOver(folder: () => string): Array<[string, () => Promise<Stack>]> {
  return [
    ['LanceDB', () => startTestStack({ folder: folder() })],
    ['Qdrant', () => startProductionStack({ folder: folder() })],
  ];
}

/** The stack `start` makes, up for the suite's tests and closed after them. */
export function useStack(start: () => Promise<Stack>): LiveStack {
  let stack: Stack | undefined;
  beforeAll(async () => {
    stack = await start();
  }, START_MS);
  afterAll(async () => stack?.close());
  return {
    get baseUrl() {
      return stack!.baseUrl;
    },
  };
}

/** The embedded stack over the folder, with an MCP client connected to its /mcp. */
export function useStackWithMcp(folder: () => string, clientName: string): LiveStack & { readonly mcp: Client } {
  let stack: Stack | undefined;
  let mcp: Client | undefined;
  beforeAll(async () => {
    stack = await startTestStack({ folder: folder() });
    mcp = new Client({ name: clientName, version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp`)));
  }, START_MS);
  afterAll(async () => {
    await mcp?.close();
    await stack?.close();
  });
  return {
    get baseUrl() {
      return stack!.baseUrl;
    },
    get mcp() {
      return mcp!;
    },
  };
}
