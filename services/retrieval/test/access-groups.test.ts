/**
 * No leak across access groups, by any route that returns passages, in both stores. The corpus has public,
 * `support` and `hr` documents; hr's 25 passages outrank everything else for the question asked, and each
 * carries a word found nowhere else (HR_MARKER). A key of group `support` must never see an hr passage:
 * not in /search, /chat (citations, answer, the prompt sent to the gateway, extractive and through the
 * gateway, JSON and SSE), /v1/chat/completions or any /mcp tool, and its top k is still filled with
 * passages it may read. Without RAG_AUTH_FILE only public documents are visible. A key of group `hr` is
 * the control that shows the same requests do reach hr passages when allowed.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAiGatewayChatModel } from '@rag/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeServer, type RecordedRequest } from '../../../packages/core/test/adapters/fake-server.ts';
import { hashApiKey, parseApiKeys } from '../src/auth/api-keys.ts';
import { FakeGateway } from './fakes/fake-gateway.ts';
import { startProductionStack, type ProductionStack } from './production-stack.ts';
import { startTestStack } from './test-stack.ts';

/** Only hr passages hold this word; any response or prompt holding it leaked an hr passage. */
const HR_MARKER = 'quokkaledger';
const SUPPORT_MARKER = 'wombatticket';
const QUESTION = 'How is the salary band review decided?';
const SUPPORT_KEY = 'sk-support-5f1e9a';
const HR_KEY = 'sk-hr-8c3d27';
const keysFile = `
keys:
  - {name: support-bot, sha256: ${hashApiKey(SUPPORT_KEY)}, groups: [support]}
  - {name: hr-bot, sha256: ${hashApiKey(HR_KEY)}, groups: [hr]}
`;

function section(title: string, body: string): string {
  return `## ${title}\n\n${body}\n`;
}

/** public/ (3 passages), support/ (3) and hr/ (25, each about salary bands and reviews, so they rank first). */
async function writeAccessCorpus(folder: string): Promise<void> {
  await mkdir(join(folder, 'hr'), { recursive: true });
  await mkdir(join(folder, 'support'), { recursive: true });
  await mkdir(join(folder, 'public'), { recursive: true });
  await writeFile(join(folder, '.rag-access.yaml'), 'rules:\n  - path: "hr/**"\n    groups: [hr]\n  - path: "support/**"\n    groups: [support]\n');
  const hrSections = Array.from({ length: 25 }, (_, n) =>
    section(
      `Salary band ${n + 1}`,
      `Salary band ${n + 1} review: the salary band review committee decides each salary band in the yearly salary review. ` +
        `The ${HR_MARKER} entry records the salary band, the review date and the decided salary for grade ${n + 1}. `.repeat(6),
    ),
  );
  await writeFile(join(folder, 'hr', 'salary-bands.md'), `# Salary bands\n\n${hrSections.join('\n')}`);
  const publicSections = ['Desks', 'Plants', 'Kitchen'].map((title) =>
    section(title, `The facilities team does a yearly review of the ${title.toLowerCase()} and posts the review on the notice board. `.repeat(8)),
  );
  await writeFile(join(folder, 'public', 'office.md'), `# Office\n\n${publicSections.join('\n')}`);
  const supportSections = ['Refunds', 'Escalations', 'Closing tickets'].map((title) =>
    section(title, `Every ${title.toLowerCase()} case gets a second review by a lead; the ${SUPPORT_MARKER} queue holds the review notes. `.repeat(8)),
  );
  await writeFile(join(folder, 'support', 'playbook.md'), `# Support playbook\n\n${supportSections.join('\n')}`);
}

interface Stack {
  baseUrl: string;
  /** Every prompt the gateway received so far (empty without a gateway). */
  gatewayPrompts(): string[];
  close(): Promise<void>;
}

function promptsOf(requests: RecordedRequest[]): string[] {
  return requests
    .filter((request) => request.path === '/v1/chat/completions')
    .map((request) => (request.body as { messages: Array<{ content: string }> }).messages.map((message) => message.content).join('\n'));
}

async function lanceDbStack(folder: string, options: { keys: boolean; gateway: boolean }): Promise<Stack> {
  const gatewayServer = options.gateway ? await startFakeServer(new FakeGateway().handle) : undefined;
  const chatModel = gatewayServer ? new OpenAiGatewayChatModel({ url: gatewayServer.url, model: 'qwen3-4b-cpu' }) : undefined;
  const stack = await startTestStack({ folder, chatModel, apiKeys: options.keys ? parseApiKeys(keysFile, 'keys.yaml') : undefined });
  return { baseUrl: stack.baseUrl, gatewayPrompts: () => promptsOf(gatewayServer?.requests ?? []), close: () => stack.close() };
}

async function productionStack(folder: string, options: { keys: boolean }): Promise<Stack & { production: ProductionStack }> {
  const production = await startProductionStack({ folder, apiKeys: options.keys ? parseApiKeys(keysFile, 'keys.yaml') : undefined });
  return { production, baseUrl: production.baseUrl, gatewayPrompts: () => promptsOf(production.servers.gateway.fake.requests), close: () => production.close() };
}

function auth(key: string | undefined): Record<string, string> {
  return key ? { authorization: `Bearer ${key}` } : {};
}

/** The raw body, so that a marker anywhere in it (passage text, citation, label, SSE event) is seen. */
async function post(stack: Stack, path: string, body: unknown, key: string | undefined): Promise<{ status: number; text: string }> {
  const response = await fetch(`${stack.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth(key) }, body: JSON.stringify(body) });
  return { status: response.status, text: await response.text() };
}

async function search(stack: Stack, key: string | undefined, k = 5): Promise<{ sources: string[]; text: string }> {
  const { status, text } = await post(stack, '/search', { query: QUESTION, k }, key);
  expect(status).toBe(200);
  return { sources: (JSON.parse(text) as { results: Array<{ source: string }> }).results.map((result) => result.source), text };
}

/** Sources an SSE /chat stream cited, with the whole stream's text. */
function sseCitations(text: string): string[] {
  const frame = /event: citations\ndata: (.*)\n/.exec(text);
  return (JSON.parse(frame![1]!) as { citations: Array<{ source: string }> }).citations.map((citation) => citation.source);
}

async function mcpClient(stack: Stack, key: string): Promise<Client> {
  const client = new Client({ name: 'access-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp`), { requestInit: { headers: auth(key) } }));
  return client;
}

function expectNoHr(text: string): void {
  expect(text).not.toContain(HR_MARKER);
  expect(text).not.toContain('hr/salary-bands.md');
}

let folder: string;
const opened: Stack[] = [];

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rag-access-api-'));
  await writeAccessCorpus(folder);
});

afterAll(async () => {
  // Production stacks close every fake server of the process: close them once the others are done.
  for (const stack of opened.splice(0).reverse()) await stack.close();
  await rm(folder, { recursive: true, force: true });
});

const variants: Array<[string, (keys: boolean) => Promise<Stack>]> = [
  ['embedded LanceDB, extractive answers', (keys) => lanceDbStack(folder, { keys, gateway: false })],
  ['embedded LanceDB, answers from the gateway', (keys) => lanceDbStack(folder, { keys, gateway: true })],
  ['production path (Qdrant, TEI, gateway)', (keys) => productionStack(folder, { keys })],
];

describe.each(variants)('%s', (_, start) => {
  let stack: Stack;
  let withoutAuthFile: Stack;

  beforeAll(async () => {
    stack = await start(true);
    opened.push(stack);
    withoutAuthFile = await start(false);
    opened.push(withoutAuthFile);
  });

  it('/search: a support key gets k passages, public and support, none of hr, though hr ranks first', async () => {
    const support = await search(stack, SUPPORT_KEY);
    expect(support.sources).toHaveLength(5);
    expect(new Set(support.sources)).toEqual(new Set(['public/office.md', 'support/playbook.md']));
    expectNoHr(support.text);

    const hr = await search(stack, HR_KEY);
    expect(hr.sources.every((source) => source === 'hr/salary-bands.md')).toBe(true);
    expect(hr.text).toContain(HR_MARKER);
  });

  it('/search without RAG_AUTH_FILE: public passages only', async () => {
    const anonymous = await search(withoutAuthFile, undefined);
    expect(anonymous.sources).toHaveLength(3);
    expect(new Set(anonymous.sources)).toEqual(new Set(['public/office.md']));
    expect(anonymous.text).not.toContain(SUPPORT_MARKER);
    expectNoHr(anonymous.text);
  });

  it('/chat: citations, answer and prompt hold no hr passage', async () => {
    const before = stack.gatewayPrompts().length;
    const { status, text } = await post(stack, '/chat', { query: QUESTION }, SUPPORT_KEY);
    expect(status).toBe(200);
    const answer = JSON.parse(text) as { citations: Array<{ source: string }>; answer: string };
    expect(answer.citations.length).toBeGreaterThan(0);
    for (const citation of answer.citations) expect(['public/office.md', 'support/playbook.md']).toContain(citation.source);
    expectNoHr(text);
    for (const prompt of stack.gatewayPrompts().slice(before)) expectNoHr(prompt);

    const control = await post(stack, '/chat', { query: QUESTION }, HR_KEY);
    expect(control.text).toContain('hr/salary-bands.md');
  });

  it('/chat streamed (SSE): no event and no prompt holds an hr passage', async () => {
    const before = stack.gatewayPrompts().length;
    const { status, text } = await post(stack, '/chat', { query: QUESTION, stream: true }, SUPPORT_KEY);
    expect(status).toBe(200);
    expect(text).toContain('event: done');
    expect(sseCitations(text).length).toBeGreaterThan(0);
    for (const source of sseCitations(text)) expect(source).not.toBe('hr/salary-bands.md');
    expectNoHr(text);
    for (const prompt of stack.gatewayPrompts().slice(before)) expectNoHr(prompt);
  });

  it('/chat without RAG_AUTH_FILE: answers from public passages only', async () => {
    const { text } = await post(withoutAuthFile, '/chat', { query: QUESTION }, undefined);
    const answer = JSON.parse(text) as { citations: Array<{ source: string }> };
    expect(answer.citations.length).toBeGreaterThan(0);
    for (const citation of answer.citations) expect(citation.source).toBe('public/office.md');
    expect(text).not.toContain(SUPPORT_MARKER);
    expectNoHr(text);
  });

  it('/v1/chat/completions, plain and streamed: no hr passage', async () => {
    const before = stack.gatewayPrompts().length;
    for (const stream of [false, true]) {
      const { status, text } = await post(stack, '/v1/chat/completions', { model: 'rag', stream, messages: [{ role: 'user', content: QUESTION }] }, SUPPORT_KEY);
      expect(status).toBe(200);
      expect(text).toMatch(/public\/office\.md|support\/playbook\.md/);
      expectNoHr(text);
    }
    for (const prompt of stack.gatewayPrompts().slice(before)) expectNoHr(prompt);
  });

  it('/mcp tools search, ask, list_sources, get_passage: no hr passage, and an hr passage reads as missing', async () => {
    const client = await mcpClient(stack, SUPPORT_KEY);
    try {
      const results = [
        await client.callTool({ name: 'search', arguments: { query: QUESTION, k: 5 } }),
        await client.callTool({ name: 'search', arguments: { query: QUESTION, source_prefix: 'hr/' } }),
        await client.callTool({ name: 'ask', arguments: { question: QUESTION } }),
        await client.callTool({ name: 'list_sources', arguments: {} }),
      ];
      for (const result of results) expectNoHr(JSON.stringify(result));
      expect((results[0]!.structuredContent as { passages: unknown[] }).passages).toHaveLength(5);
      expect((results[3]!.structuredContent as { sources: Array<{ source: string }> }).sources.map((s) => s.source)).toEqual(['public/office.md', 'support/playbook.md']);
      const hidden = await client.callTool({ name: 'get_passage', arguments: { source: 'hr/salary-bands.md', chunk_index: 1 } });
      expect(hidden.isError).toBe(true);
      expect(JSON.stringify(hidden)).toContain('RAG_PASSAGE_NOT_FOUND');
      expect(JSON.stringify(hidden)).not.toContain(HR_MARKER);
    } finally {
      await client.close();
    }
    const control = await mcpClient(stack, HR_KEY);
    try {
      expect(JSON.stringify(await control.callTool({ name: 'get_passage', arguments: { source: 'hr/salary-bands.md', chunk_index: 1 } }))).toContain(HR_MARKER);
    } finally {
      await control.close();
    }
  });
});

describe('a change of groups alone on the production path', () => {
  it('rewrites the Qdrant payload of the document without one embedding request, and search follows', async () => {
    const corpus = await mkdtemp(join(tmpdir(), 'rag-access-regroup-'));
    await writeAccessCorpus(corpus);
    const stack = await productionStack(corpus, { keys: false });
    opened.push(stack);
    try {
      const { production } = stack;
      const hrPoints = production.qdrant.payloadsOf('hr/salary-bands.md');
      expect(hrPoints.length).toBe(25);
      expect(hrPoints.every((payload) => JSON.stringify(payload.groups) === '["hr"]')).toBe(true);
      const embedRequests = production.servers.embed.fake.requests.length;
      const pointWrites = () => production.servers.store.fake.requests.filter((request) => request.method === 'PUT' && request.path.includes('/points')).length;
      const upsertsBefore = pointWrites();

      // hr/ becomes public: the access file loses its hr rule.
      await writeFile(join(corpus, '.rag-access.yaml'), 'rules:\n  - path: "support/**"\n    groups: [support]\n');
      const summary = await production.ingestAgain();

      expect(production.servers.embed.fake.requests.length).toBe(embedRequests);
      expect(summary).toMatchObject({ groupUpdates: 1, chunks: 0, upserts: 25 });
      expect(production.qdrant.payloadsOf('hr/salary-bands.md').map((payload) => payload.groups)).toEqual(Array(25).fill([]));
      expect(production.qdrant.payloadsOf('hr/salary-bands.md').map((payload) => payload.text)).toEqual(hrPoints.map((payload) => payload.text));
      expect(pointWrites()).toBe(upsertsBefore);
      expect((await search(stack, undefined)).sources.every((source) => source === 'hr/salary-bands.md')).toBe(true);
    } finally {
      await rm(corpus, { recursive: true, force: true });
    }
  });
});
