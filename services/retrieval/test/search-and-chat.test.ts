import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, readJson, startTestStack, type TestStack } from './test-stack.ts';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});

afterAll(async () => {
  await stack.close();
});

async function topSource(query: string): Promise<string | undefined> {
  const { status, body } = await postJson(stack.baseUrl, '/search', { query });
  expect(status).toBe(200);
  return body.results[0]?.source;
}

describe('ingesting the fixture handbook', () => {
  it('indexes the Markdown files and skips the unsupported one', () => {
    expect(stack.ingestSummary.toLine()).toMatch(/^done: 4 files, \d+ chunks, \d+ upserts, 0 deletes, 1 skipped, 0 errors$/);
    expect(stack.ingestSummary.upserts).toBe(stack.ingestSummary.chunks);
  });
});

describe('POST /search', () => {
  it('returns ranked passages with source, heading path, chunk index, score and text', async () => {
    const { body } = await postJson(stack.baseUrl, '/search', { query: 'how long are snapshots kept?', k: 2 });
    expect(body.results).toHaveLength(2);
    const [first] = body.results;
    expect(first).toMatchObject({ source: 'backups.md', heading_path: 'Backups > Schedule', chunk_index: 0 });
    expect(first.text.startsWith('backups.md > Backups > Schedule\n\n')).toBe(true);
    expect(first.score).toBeGreaterThan(body.results[1].score);
    // No reranker is configured here: there is no fallback to report, so the field is absent.
    expect(body).not.toHaveProperty('reranked');
  });

  it.each([
    ['can I work from my house?', 'onboarding.md'],
    ['who gets paged when checkout errors climb?', 'ops/alerts.md'],
    ['how do I bring back a database snapshot?', 'backups.md'],
    ['when must new staff finish the security course?', 'onboarding.md'],
  ])('ranks the answering document first for the paraphrase %j', async (query, source) => {
    expect(await topSource(query)).toBe(source);
  });

  it.each([
    ['ERR_LEDGER_DRIFT', 'ops/alerts.md'],
    ['PAYMENTS_QUOTA_LIMIT', 'ops/alerts.md'],
    ['--snapshot flag of stratactl', 'backups.md'],
  ])('ranks the document holding the exact identifier %j first', async (query, source) => {
    expect(await topSource(query)).toBe(source);
  });

  it('honours k', async () => {
    const { body } = await postJson(stack.baseUrl, '/search', { query: 'snapshots restore production', k: 1 });
    expect(body.results).toHaveLength(1);
  });
});

describe('POST /chat without a gateway', () => {
  it('answers extractively, quoting the best passage with its label', async () => {
    const { status, body } = await postJson(stack.baseUrl, '/chat', { query: 'How many days a week can I work from home?' });
    expect(status).toBe(200);
    expect(body.mode).toBe('extractive');
    expect(body.answer).toContain('three days a week');
    expect(body.answer).toContain('[onboarding.md#1]');
    expect(body.citations[0]).toMatchObject({ source: 'onboarding.md', heading_path: 'Onboarding > Remote work', chunk_index: 1 });
  });

  it('says the documents do not cover an unrelated question, citing nothing', async () => {
    const { body } = await postJson(stack.baseUrl, '/chat', { query: 'What is the capital of France?' });
    expect(body).toEqual({ answer: 'The indexed documents do not cover this question.', citations: [], mode: 'extractive' });
  });

  it('streams citations, tokens and done as Server-Sent Events, carrying what the JSON answer says', async () => {
    const query = 'How many days a week can I work from home?';
    const { body: answer } = await postJson(stack.baseUrl, '/chat', { query });
    const response = await fetch(`${stack.baseUrl}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query }),
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const text = await response.text();
    // Every frame is `event: <name>`, one `data:` line of JSON, and a blank line.
    expect(text).toMatch(/^(event: \w+\ndata: .+\n\n)+$/);
    const events = [...text.matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map((match) => ({ event: match[1], data: JSON.parse(match[2]!) }));
    expect(events.map((event) => event.event)).toEqual(['citations', 'token', 'done']);
    const [citations, token, done] = events;
    expect(citations!.data).toEqual({
      citations: [
        { source: 'onboarding.md', heading_path: 'Onboarding > Remote work', chunk_index: 1, score: expect.any(Number) },
        ...answer.citations.slice(1),
      ],
    });
    expect(citations!.data.citations).toEqual(answer.citations);
    // Without a model the whole extractive answer is one token; done repeats the JSON answer.
    expect(token!.data).toEqual({ text: answer.answer });
    expect(token!.data.text).toContain('three days a week');
    expect(done!.data).toEqual({ answer: answer.answer, citations: answer.citations, mode: 'extractive' });
  });
});

describe('health, readiness and metrics', () => {
  it('answers /healthz and /readyz', async () => {
    expect(await readJson(await fetch(`${stack.baseUrl}/healthz`))).toEqual({ status: 'ok' });
    const ready = await fetch(`${stack.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await readJson(ready)).toEqual({ status: 'ready', checks: { store: 'ok' } });
  });

  it('exposes request counters and stage durations in Prometheus format', async () => {
    await postJson(stack.baseUrl, '/search', { query: 'snapshots' });
    await postJson(stack.baseUrl, '/search', { query: '' });
    const response = await fetch(`${stack.baseUrl}/metrics`);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const exposition = await response.text();
    expect(exposition).toMatch(/rag_retrieval_requests(_total)?\{route="\/search",outcome="ok"\} \d+/);
    expect(exposition).toMatch(/rag_retrieval_requests(_total)?\{route="\/search",outcome="client_error"\} \d+/);
    expect(exposition).toContain('rag_retrieval_stage_duration_bucket{stage="search"');
    expect(exposition).toContain('rag_retrieval_top_score_bucket');
  });
});
