/**
 * Issue 43 item 6: a model that runs on (or a hostile gateway) was read to its end, and every settled sentence of a
 * streamed answer re-checked the whole text before it: 16,000 characters in 4-character tokens held the event loop
 * 5 s, quadratic beyond. An answer now reads at most MAX_ANSWER_CHARS of the reply.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_ANSWER_CHARS } from '../../src/chat/answer-length.ts';
import type { ChatCompletion, ChatMessage, ChatModel, ChatStreamEvent, CompletionOptions } from '../../src/chat/chat-model.ts';
import { chunkId } from '../../src/chunking/chunk-id.ts';
import { Answerer } from '../../src/pipeline/answer.ts';
import { Retriever } from '../../src/pipeline/retrieve.ts';
import { encodeDocument } from '../../src/sparse/bm25-encoder.ts';
import { LanceDbStore } from '../../src/stores/lancedb.ts';
import { Telemetry } from '../../src/telemetry.ts';

const SENTENCE = 'Snapshots are kept for 35 days [P1]. ';
/** Past this many characters pulled, the fake fails the test: the answer read what no answer needs. */
const PULL_LIMIT = MAX_ANSWER_CHARS + 4_000;

/** A model that never stops: the same supported sentence, 4 characters a token. */
class RunawayModel implements ChatModel {
  readonly modelId = 'runaway';
  pulled = 0;

  async complete(_messages: ChatMessage[], _signal?: AbortSignal, _options?: CompletionOptions): Promise<ChatCompletion> {
    return { content: SENTENCE.repeat(5_000) };
  }

  async *stream(_messages: ChatMessage[], _signal?: AbortSignal, _options?: CompletionOptions): AsyncIterable<ChatStreamEvent> {
    const text = SENTENCE.repeat(Math.ceil(PULL_LIMIT / SENTENCE.length));
    for (; this.pulled < PULL_LIMIT; this.pulled += 4) yield { type: 'token', text: text.slice(this.pulled, this.pulled + 4) };
    throw new Error(`read ${this.pulled} characters of a runaway answer`);
  }
}

const telemetry = new Telemetry();
let dataDir: string;
let store: LanceDbStore;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rag-runaway-'));
  store = new LanceDbStore({ dataDir, collection: 'docs' });
  await store.open(null);
  const text = 'snapshots are kept for 35 days';
  await store.upsert([{ id: chunkId('backups.md', 0), source: 'backups.md', headingPath: 'Backups', chunkIndex: 0, text: `backups.md > Backups\n\n${text}`, contentHash: 'h', groups: [], sparse: encodeDocument(text), ingestedAt: 'now' }]);
});

afterEach(async () => {
  await store.close();
  await rm(dataDir, { recursive: true, force: true });
});

const answerer = (chatModel: ChatModel) => new Answerer({ retriever: new Retriever({ store, rerankCandidates: 50, telemetry }), chatModel, telemetry });

describe('a model that runs on', () => {
  it('is read up to MAX_ANSWER_CHARS when streamed, the rest left unread', async () => {
    const model = new RunawayModel();
    let shown = '';
    for await (const event of answerer(model).stream('How long are snapshots kept?', 1, [])) {
      if (event.type === 'token') shown += event.text;
    }
    expect(model.pulled).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
    expect(shown.startsWith('Snapshots are kept for 35 days [backups.md#0].')).toBe(true);
  }, 30_000);

  it('is answered from its first MAX_ANSWER_CHARS characters when not streamed', async () => {
    const model = new RunawayModel();
    const answer = await answerer(model).answer('How long are snapshots kept?', 1, []);
    expect(answer.grounding!.sentences.length).toBeLessThanOrEqual(Math.ceil(MAX_ANSWER_CHARS / SENTENCE.length));
  }, 30_000);
});
