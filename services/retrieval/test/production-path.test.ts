/**
 * End to end on the production path: the real ingest() into Qdrant, then /search and /chat over real
 * HTTP, with TEI (embed, rerank), Qdrant and the LLM gateway played by local servers that answer as
 * their APIs document. Asserts what each dependency received, not only what the user gets.
 */
import { encodeQuery } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { within } from '../../../packages/core/test/adapters/fake-server.ts';
import { FAKE_USAGE, INVENTED_LABEL } from './fakes/fake-gateway.ts';
import { FAKE_EMBED_DIMENSION, hashedEmbedding, rerankScore } from './fakes/fake-tei.ts';
import { EMBED_MODEL, GATEWAY_MODEL, KEYS, startProductionStack, type ProductionStack } from './production-stack.ts';
import { postJson, readJson } from './test-stack.ts';

let stack: ProductionStack;

beforeAll(async () => {
  stack = await startProductionStack();
});

afterAll(async () => {
  await stack?.close();
});

const REMOTE_WORK = 'How many days a week can I work from home?';

function lastRequest(dependency: 'embed' | 'rerank' | 'gateway') {
  const request = stack.servers[dependency].fake.requests.at(-1);
  if (!request) throw new Error(`no request reached ${dependency}`);
  return request;
}

/** The SSE frames of a /chat stream, parsed. */
function sseEvents(text: string): Array<{ event: string; data: any }> {
  return [...text.matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map((match) => ({ event: match[1]!, data: JSON.parse(match[2]!) }));
}

describe('ingesting the handbook into Qdrant', () => {
  it('creates the collection with the model lock and stores every chunk', () => {
    expect(stack.ingestSummary.toLine()).toMatch(/^done: 4 files, \d+ chunks, \d+ upserts, 0 deletes, 1 skipped, 0 errors$/);
    const collection = stack.qdrant.collections.get('docs-v2')!;
    expect(collection.points.size).toBe(stack.ingestSummary.chunks);
    expect(collection.config).toMatchObject({
      params: { vectors: { dense: { size: FAKE_EMBED_DIMENSION, distance: 'Cosine' } }, sparse_vectors: { bm25: { modifier: 'idf' } } },
      metadata: { embedding_model: EMBED_MODEL, embedding_dimension: FAKE_EMBED_DIMENSION },
    });
    // More chunks than candidates (4), so the query limit really cuts; k = 3 below stays under it, so the rerank runs.
    expect(stack.ingestSummary.chunks).toBeGreaterThan(stack.rerankCandidates);
  });
});

describe('POST /search on the production path', () => {
  const query = 'how long are snapshots kept?';

  it('ranks the answering passage first, scored by the reranker with the fusion score kept', async () => {
    const { status, body } = await postJson(stack.baseUrl, '/search', { query, k: 3 });
    expect(status).toBe(200);
    expect(body.reranked).toBe(true);
    expect(body.results).toHaveLength(3);
    expect(body.results[0]).toMatchObject({ source: 'backups.md', heading_path: 'Backups > Schedule', chunk_index: 0 });
    for (const result of body.results) expect(result.score).toBe(rerankScore(query, result.text));
    const fused = new Map(stack.qdrant.answers.at(-1)!.points.map((point) => [point.payload.text, point.score]));
    for (const result of body.results) expect(result.fusion_score).toBe(fused.get(result.text));
    const scores = body.results.map((result: { score: number }) => result.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('sends Qdrant one hybrid query: dense + bm25 prefetches each filtered to public points (no auth file), RRF fusion, RERANK_CANDIDATES results', async () => {
    await postJson(stack.baseUrl, '/search', { query, k: 3 });
    const prefetchLimit = Math.max(stack.rerankCandidates, 20);
    const publicOnly = { should: [{ is_empty: { key: 'groups' } }] };
    expect(stack.qdrant.queries.at(-1)).toEqual({
      prefetch: [
        { query: hashedEmbedding(query), using: 'dense', filter: publicOnly, limit: prefetchLimit },
        { query: encodeQuery(query), using: 'bm25', filter: publicOnly, limit: prefetchLimit },
      ],
      query: { fusion: 'rrf' },
      filter: publicOnly,
      limit: stack.rerankCandidates,
      with_payload: true,
    });
  });

  it('embeds the query through TEI and reranks exactly the fused candidates', async () => {
    await postJson(stack.baseUrl, '/search', { query, k: 3 });
    const embed = lastRequest('embed');
    expect([embed.method, embed.path, embed.headers.authorization]).toEqual(['POST', '/v1/embeddings', `Bearer ${KEYS.embed}`]);
    expect(embed.body).toEqual({ input: [query], model: EMBED_MODEL });
    const rerank = lastRequest('rerank');
    expect([rerank.method, rerank.path, rerank.headers.authorization]).toEqual(['POST', '/rerank', `Bearer ${KEYS.rerank}`]);
    const fusedTexts = stack.qdrant.answers.at(-1)!.points.map((point) => point.payload.text);
    expect(fusedTexts).toHaveLength(stack.rerankCandidates);
    expect(rerank.body).toEqual({ query, texts: fusedTexts, truncate: true });
  });
});

describe('POST /chat through the gateway', () => {
  it('answers in llm mode citing only passages it was given, reporting the invented one, with usage', async () => {
    const { status, body } = await postJson(stack.baseUrl, '/chat', { query: REMOTE_WORK });
    expect(status).toBe(200);
    expect(body.mode).toBe('llm');
    expect(body.citations).toEqual([expect.objectContaining({ source: 'onboarding.md', heading_path: 'Onboarding > Remote work', chunk_index: 1 })]);
    expect(body.unknown_citations).toEqual([INVENTED_LABEL]);
    expect(body.usage).toEqual(FAKE_USAGE);
    expect(body.answer).toContain('[onboarding.md#1]');
  });

  it('sends system rules first, the labelled passages, and the question last', async () => {
    await postJson(stack.baseUrl, '/chat', { query: REMOTE_WORK, k: 2 });
    const request = lastRequest('gateway');
    expect([request.method, request.path, request.headers.authorization]).toEqual(['POST', '/v1/chat/completions', `Bearer ${KEYS.gateway}`]);
    const { model, stream, messages } = request.body as { model: string; stream: boolean; messages: Array<{ role: string; content: string }> };
    expect({ model, stream }).toEqual({ model: GATEWAY_MODEL, stream: false });
    expect(messages.map((message) => message.role)).toEqual(['system', 'user']);
    expect(messages[0]!.content).toMatch(/only the passages/i);
    expect(messages[0]!.content).toMatch(/Cite every claim/);
    expect(messages[0]!.content).toMatch(/untrusted data/);
    // The fence value is drawn for each request and named on the user message's first line.
    const nonce = /^Fence value: ([0-9a-f]{24})\n/.exec(messages[1]!.content)?.[1];
    expect(nonce).toBeDefined();
    const user = messages[1]!.content;
    expect(user).toContain(`<<<PASSAGE ${nonce} [P1]>>>\nonboarding.md > Onboarding > Remote work\n\n`);
    expect(user.match(/^<<<PASSAGE [0-9a-f]{24} \[P\d+\]>>>$/gm)).toEqual([`<<<PASSAGE ${nonce} [P1]>>>`, `<<<PASSAGE ${nonce} [P2]>>>`]);
    expect(user.match(new RegExp(`^<<<END ${nonce}>>>$`, 'gm'))).toHaveLength(2);
    expect(user.endsWith(`<<<END ${nonce}>>>\n\nQuestion: ${REMOTE_WORK}`)).toBe(true);
    await postJson(stack.baseUrl, '/chat', { query: REMOTE_WORK, k: 2 });
    expect((lastRequest('gateway').body as { messages: Array<{ content: string }> }).messages[0]!.content).not.toContain(nonce);
  });

  it('streams citations first, then tokens, then done with usage', async () => {
    const response = await fetch(`${stack.baseUrl}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: REMOTE_WORK, stream: true }),
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = sseEvents(await response.text());
    expect(events[0]?.event).toBe('citations');
    expect(events[0]?.data.citations[0]).toMatchObject({ source: 'onboarding.md', chunk_index: 1 });
    const tokens = events.filter((event) => event.event === 'token').map((event) => event.data.text);
    expect(tokens.length).toBeGreaterThan(1);
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    expect(done.data).toMatchObject({ answer: tokens.join(''), mode: 'llm', usage: FAKE_USAGE, unknown_citations: [INVENTED_LABEL] });
    expect(lastRequest('gateway').body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('aborts the gateway request when the client closes the stream', async () => {
    stack.gateway.holdStreamOpen = true;
    try {
      const client = new AbortController();
      const response = await fetch(`${stack.baseUrl}/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: REMOTE_WORK }),
        signal: client.signal,
      });
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let received = '';
      while (!received.includes('event: token')) received += (await within(reader.read())).value ?? '';
      const upstream = lastRequest('gateway');
      client.abort();
      await within(upstream.clientGone); // the fake gateway saw its socket close
    } finally {
      stack.gateway.holdStreamOpen = false;
    }
  });

  it('keeps serving after an aborted stream', async () => {
    const { status, body } = await postJson(stack.baseUrl, '/chat', { query: REMOTE_WORK });
    expect(status).toBe(200);
    expect(body.mode).toBe('llm');
  });
});

describe('/readyz on the production path', () => {
  it('names every dependency as ready', async () => {
    const response = await fetch(`${stack.baseUrl}/readyz`);
    expect(response.status).toBe(200);
    expect(await readJson(response)).toEqual({ status: 'ready', checks: { store: 'ok', embed: 'ok', rerank: 'ok', gateway: 'ok' } });
  });
});
