/**
 * The production embedding adapter (EMBED_URL, TeiEmbedder) against a real embedding server: llama.cpp's
 * llama-server serving nomic-embed-text-v1.5 (pnpm models:fetch; pnpm llm:serve nomic-embed-text-v1.5 runs
 * the same), 2 threads. llama-server facts (tools/server/README.md): POST /v1/embeddings answers OpenAI's
 * shape with L2-normalised vectors; GET /health is 503 while loading, then 200; no /info (GET /v1/models
 * lists the --alias). nomic-embed-text-v1.5 needs its task prefixes, `search_query: ` and
 * `search_document: ` (https://huggingface.co/nomic-ai/nomic-embed-text-v1.5, "Usage").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLlamaServer, unservableReason, type RunningServer } from '../../../../scripts/llm/llama-server.ts';
import { TeiEmbedder } from '../../src/embedders/tei.ts';
import { realComponentSkipReason } from '../real/real-components.ts';

const MODEL = 'nomic-embed-text-v1.5';
const skip = realComponentSkipReason('llama-server embeddings', unservableReason(MODEL));
let server: RunningServer;

beforeAll(async () => {
  if (!skip) server = await startLlamaServer(MODEL, { threads: 2 });
});

afterAll(async () => {
  if (server) expect(await server.stop()).toBe(0);
});

const PASSAGES = [
  'Nightly snapshots of every database are kept for thirty days, then deleted.',
  'The VPN client must be updated to version 4.2 before March; older clients are refused.',
  'Everyone may work from home up to three days a week.',
];

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  for (let i = 0; i < a.length; i += 1) dot += a[i]! * b[i]!;
  return dot;
}

function embedder(batchSize = 8): TeiEmbedder {
  return new TeiEmbedder({ url: server.url, apiKey: server.apiKey, batchSize, timeoutMs: 120_000, queryPrefix: 'search_query: ', passagePrefix: 'search_document: ' });
}

describe.skipIf(skip)('EMBED_URL against llama-server serving nomic-embed-text-v1.5', () => {
  it('is ready once the model is loaded, and locks the collection to the model it lists: 768 dimensions', async () => {
    const adapter = embedder();
    await adapter.checkReady();
    expect(await adapter.describe()).toEqual({ model: MODEL, dimension: 768 });
  });

  it('embeds a batch in input order, the same vectors as one text at a time, normalised', async () => {
    const batched = await embedder(8).embedDocuments(PASSAGES);
    const single = await embedder(1).embedDocuments(PASSAGES);
    for (let i = 0; i < PASSAGES.length; i += 1) {
      expect(Math.hypot(...batched[i]!)).toBeCloseTo(1, 3);
      expect(cosine(batched[i]!, single[i]!)).toBeGreaterThan(0.999);
    }
  });

  it('ranks the passage that answers a paraphrased question first, with the prefixes', async () => {
    const adapter = embedder();
    const passages = await adapter.embedDocuments(PASSAGES);
    const questions = ['How long are backups retained?', 'Which version of the remote access software do I need?', 'Can I do my job from my house?'];
    for (const [expected, question] of questions.entries()) {
      const query = await adapter.embedQuery(question);
      const scores = passages.map((passage) => cosine(query, passage));
      expect(scores.indexOf(Math.max(...scores))).toBe(expected);
    }
  });
});
