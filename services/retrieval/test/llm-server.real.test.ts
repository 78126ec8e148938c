/**
 * Every generating path against a real language model: llama.cpp's llama-server (pnpm models:fetch) serving
 * SmolLM2-135M-Instruct where speed matters, and Qwen2.5-Coder-1.5B-Instruct where behaviour does, each on
 * 2 threads, greedy decoding (scripts/llm/llama-server.ts). The app is the real one on port 0 over a real
 * LanceDB; the gateway adapter talks to the model server as it talks to vLLM behind Envoy.
 *
 * llama-server facts relied on (llama.cpp tools/server/README.md): /v1/chat/completions streams
 * chat.completion.chunk events and, with stream_options.include_usage, a last chunk with `usage`;
 * GET /metrics (--metrics) exposes llamacpp:tokens_predicted_total; GET /slots lists each slot's
 * is_processing; a request whose client disconnects is cancelled (measured here: a cancelled stream stops
 * within a few tokens, where the same prompt left alone runs to the 256-token cap).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chunkMarkdown, createChunkContexts, createLogger, isDeclined, loadConfig, OpenAiGatewayChatModel, searchQueryFor, Telemetry, UNSUPPORTED_MARK } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLlamaServer, unservableReason, type RunningServer } from '../../../scripts/llm/llama-server.ts';
import { realComponentSkipReason, repositoryRoot } from '../../../packages/core/test/real/real-components.ts';
import { postJson, startTestStack, type TestStack } from './test-stack.ts';

const SMALL = 'smollm2-135m-instruct';
const CAPABLE = 'qwen2.5-coder-1.5b-instruct';
const vllmGke = join(repositoryRoot, '..', 'shared', 'corpora', 'vllm-gke');
const skip = realComponentSkipReason('llama-server', unservableReason(SMALL) ?? unservableReason(CAPABLE));

let small: RunningServer;
let capable: RunningServer;
let smallStack: TestStack;
let capableStack: TestStack;

function gateway(server: RunningServer): OpenAiGatewayChatModel {
  return new OpenAiGatewayChatModel({ url: server.url, model: server.name, apiKey: server.apiKey, timeoutMs: 600_000 });
}

beforeAll(async () => {
  if (skip) return;
  [small, capable] = await Promise.all([startLlamaServer(SMALL, { threads: 2 }), startLlamaServer(CAPABLE, { threads: 2 })]);
  [smallStack, capableStack] = await Promise.all([
    startTestStack({ chatModel: gateway(small) }),
    startTestStack({ chatModel: gateway(capable), folder: vllmGke }),
  ]);
});

afterAll(async () => {
  await Promise.all([smallStack?.close(), capableStack?.close()]);
  // SIGTERM: llama-server ends its task loop, cleans up and exits 0 (tools/server/server.cpp).
  const codes = await Promise.all([small?.stop(), capable?.stop()]);
  if (!skip) expect(codes).toEqual([0, 0]);
});

function sseEvents(text: string): Array<{ event: string; data: any }> {
  return [...text.matchAll(/event: (\w+)\ndata: (.+)\n/g)].map((match) => ({ event: match[1]!, data: JSON.parse(match[2]!) }));
}

async function metric(server: RunningServer, name: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.apiKey}` } })).text();
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
}

describe.skipIf(skip)('a real model behind the gateway adapter', () => {
  it('the 1.5B model answers a question of the seed corpus from the passage that holds its fact: every claim it shows is supported by that page and cited to it, or marked', async () => {
    const { status, body } = await postJson(capableStack.baseUrl, '/chat', { query: 'Which address range do pods get inside the subnet?' });
    expect(status).toBe(200);
    expect(body.mode).toBe('llm');
    // The model's wording moves with the fence value drawn for each request (greedy decoding, a different prompt):
    // it states the range (10.4.0.0/14), or names the secondary ranges that hold it, and may add a sentence of its
    // own. What the product guarantees holds for every wording; how often the fact itself is stated is the answer
    // gate's measure (pnpm eval:answers:ci, key facts).
    const sentences: Array<{ text: string; status: string; supported_by?: string }> = body.grounding.sentences;
    // Supported as cited, or re-cited by the check to the passage that supports it (attributed, miscited).
    const shown = sentences.filter((sentence) => ['supported', 'attributed', 'miscited'].includes(sentence.status));
    expect(shown.length).toBeGreaterThan(0);
    for (const sentence of shown) expect(sentence.supported_by).toMatch(/^infra\/modules\/network\/README\.md#\d+$/);
    const fact = sentences.find((sentence) => sentence.text.includes('10.4.0.0/14'));
    if (fact) expect(shown).toContain(fact);
    expect(body.answer.split(UNSUPPORTED_MARK).length - 1).toBe(body.grounding.unsupported);
    expect(body.citations.length).toBeGreaterThan(0);
    for (const citation of body.citations) expect(citation.source).toBe('infra/modules/network/README.md');
    expect(body.usage.prompt_tokens).toBeGreaterThan(500);
  });

  it('the 1.5B model declines a question its passages do not answer, though they passed the relevance rule', async () => {
    const { body } = await postJson(capableStack.baseUrl, '/chat', { query: 'How do I rotate the TLS certificates of the Postgres database?' });
    expect(body.mode).toBe('llm');
    expect(body.citations).toEqual([]);
    expect(isDeclined(body.answer)).toBe(true);
  });

  it('the 1.5B model condenses a follow-up into a query naming what the pronoun stands for', async () => {
    const telemetry = new Telemetry();
    try {
      const earlier = [
        { role: 'user' as const, content: 'What does KEDA do with the GPU deployment when there is no traffic?' },
        { role: 'assistant' as const, content: 'It scales vllm-server down to zero after 300 s idle.' },
      ];
      const search = await searchQueryFor('And how long does it take to come back?', earlier, { chatModel: gateway(capable), telemetry, condenseTimeoutMs: 600_000 });
      expect(search.method).toBe('condensed');
      expect(search.text).toMatch(/gpu|vllm|keda|scale/i);
    } finally {
      await telemetry.shutdown();
    }
  });

  it('/chat streams the small model\'s answer as checked sentences, then done with the whole answer, its usage and its grounding', async () => {
    const response = await fetch(`${smallStack.baseUrl}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'How many days a week can I work from home?', stream: true }) });
    const events = sseEvents(await response.text());
    expect(events[0]!.event).toBe('citations');
    const tokens = events.filter((event) => event.event === 'token');
    // A checked sentence at a time (answer-check/verified-stream.ts), or the not-covered answer when none is supported.
    expect(tokens.length).toBeGreaterThan(0);
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    expect(done.data.answer).toBe(tokens.map((event) => event.data.text).join(''));
    expect(done.data.usage.completion_tokens).toBeGreaterThan(0);
    expect(done.data.usage.total_tokens).toBe(done.data.usage.prompt_tokens + done.data.usage.completion_tokens);
    expect(typeof done.data.grounding.grounded).toBe('boolean');
  });

  it('/v1/chat/completions answers plain and streamed from the small model', async () => {
    const request = { model: 'rag', messages: [{ role: 'user', content: 'How many days a week can I work from home?' }] };
    const { body: completion } = await postJson(smallStack.baseUrl, '/v1/chat/completions', request);
    expect(completion.object).toBe('chat.completion');
    expect(completion.rag.mode).toBe('llm');
    expect(completion.usage.completion_tokens).toBeGreaterThan(0);
    const streamed = await fetch(`${smallStack.baseUrl}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...request, stream: true }) });
    const text = await streamed.text();
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const chunks = [...text.matchAll(/^data: (\{.+\})$/gm)].map((match) => JSON.parse(match[1]!));
    // Not the same text as the plain answer: each request draws its own fence value, and this model copies it.
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.model === 'rag')).toBe(true);
    expect(chunks[0].citations.length).toBeGreaterThan(0);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('').length).toBeGreaterThan(0);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
    expect(typeof chunks.at(-1).grounding.grounded).toBe('boolean');
  });

  it('MCP ask answers from the small model with the mode and the grounding', async () => {
    const client = new Client({ name: 'rag-real-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${smallStack.baseUrl}/mcp`)));
    try {
      const result: any = await client.callTool({ name: 'ask', arguments: { question: 'How many days a week can I work from home?' } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent.mode).toBe('llm');
      expect(result.structuredContent.answer.length).toBeGreaterThan(0);
      expect(typeof result.structuredContent.grounding.grounded).toBe('boolean');
    } finally {
      await client.close();
    }
  });

  it('records the real token usage and the GenAI metrics of the model calls', async () => {
    const { body } = await postJson(smallStack.baseUrl, '/chat', { query: 'What does a new employee receive on the first day?' });
    const metrics = await (await fetch(`${smallStack.baseUrl}/metrics`)).text();
    const input = new RegExp(`^gen_ai_client_token_usage_sum\\{[^}]*gen_ai_token_type="input"[^}]*gen_ai_request_model="${SMALL}"[^}]*\\} (\\d+)`, 'm').exec(metrics)
      ?? new RegExp(`^gen_ai_client_token_usage_sum\\{[^}]*gen_ai_request_model="${SMALL}"[^}]*gen_ai_token_type="input"[^}]*\\} (\\d+)`, 'm').exec(metrics);
    expect(Number(input?.[1])).toBeGreaterThanOrEqual(body.usage.prompt_tokens);
    expect(metrics).toMatch(new RegExp(`gen_ai_client_operation_duration_count\\{[^}]*gen_ai_request_model="${SMALL}"`));
  });

  it('a client that disconnects mid-answer stops the model: generation ends within a few tokens, not at the cap', async () => {
    const before = await metric(small, 'llamacpp:tokens_predicted_total');
    const aborter = new AbortController();
    const response = await fetch(`${smallStack.baseUrl}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'Describe the remote work and first week rules in detail, at length.', stream: true }), signal: aborter.signal });
    const reader = response.body!.getReader();
    let received = '';
    while (!received.includes('event: citations')) received += new TextDecoder().decode((await reader.read()).value);
    // Tokens reach the client a checked sentence at a time, so the client goes away once the model is at work.
    while (!(await slotsBusy())) await new Promise((resolve) => setTimeout(resolve, 100));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    aborter.abort();
    do await new Promise((resolve) => setTimeout(resolve, 200));
    while (await slotsBusy());
    const predicted = (await metric(small, 'llamacpp:tokens_predicted_total')) - before;
    expect(predicted).toBeLessThan(64); // left alone, the small model runs to its 256-token cap on such a prompt
  });

  async function slotsBusy(): Promise<boolean> {
    return ((await (await fetch(`${small.url}/slots`, { headers: { authorization: `Bearer ${small.apiKey}` } })).json()) as Array<{ is_processing: boolean }>).some((slot) => slot.is_processing);
  }

  it('CONTEXT_MODE=llm writes a context for each chunk of a small corpus with the small model, and caches it', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'rag-llm-context-'));
    try {
      const config = loadConfig({ RAG_DATA_DIR: dataDir, CONTEXT_MODE: 'llm', GATEWAY_URL: small.url, GATEWAY_MODEL: SMALL, GATEWAY_API_KEY: small.apiKey, CONTEXT_CONCURRENCY: '2' });
      const contexts = (await createChunkContexts(config, createLogger('silent')))!;
      const markdown = await readFile(join(repositoryRoot, 'services/retrieval/test/fixtures/handbook/onboarding.md'), 'utf8');
      const chunks = chunkMarkdown(markdown, 'onboarding.md', { chunkSize: 300, chunkOverlap: 0 });
      const result = await contexts.contextsFor({ uri: 'onboarding.md', markdown, contentHash: 'onboarding-v1' }, chunks);
      expect(result.failed).toBe(0);
      expect(result.written).toBe(chunks.length);
      expect(result.contexts.every((context) => context.trim().length > 0)).toBe(true);
      const again = await contexts.contextsFor({ uri: 'onboarding.md', markdown, contentHash: 'onboarding-v1' }, chunks);
      expect(again).toMatchObject({ cached: chunks.length, written: 0, contexts: result.contexts });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
