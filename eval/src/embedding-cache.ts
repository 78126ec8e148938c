import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Embedder, EmbeddingModelLock } from '@rag/core';

/**
 * Passage embeddings kept on disk between eval runs, per model: re-running the ladder over BEIR SciFact
 * (8,650 chunks) with a real ONNX model takes minutes of CPU on this machine, the same vectors every time.
 * One binary file per model id: records of a 32-byte SHA-256 of the text, then `dimension` float32 values.
 * Queries are kept in memory for the run only: the ladder asks the same query once per mode.
 */
export class CachedEmbedder implements Embedder {
  readonly provider: string | undefined;
  private vectors = new Map<string, number[]>();
  private queries = new Map<string, Promise<number[]>>();
  /** Passages answered from the file and passages the model embedded, since open. */
  readonly counts = { cached: 0, embedded: 0 };
  private file = '';
  private dimension = 0;

  private constructor(private readonly inner: Embedder) {
    this.provider = inner.provider;
  }

  get modelId(): string {
    return this.inner.modelId;
  }

  static async open(inner: Embedder, directory: string): Promise<CachedEmbedder> {
    const cached = new CachedEmbedder(inner);
    const lock = await inner.describe();
    cached.dimension = lock.dimension;
    await mkdir(directory, { recursive: true });
    cached.file = join(directory, `${createHash('sha256').update(`${lock.model}\n${lock.dimension}`).digest('hex').slice(0, 16)}.f32`);
    if (existsSync(cached.file)) cached.load(await readFile(cached.file));
    return cached;
  }

  private load(bytes: Buffer): void {
    const record = 32 + 4 * this.dimension;
    for (let offset = 0; offset + record <= bytes.length; offset += record) {
      const key = bytes.subarray(offset, offset + 32).toString('hex');
      const values = new Float32Array(bytes.buffer.slice(bytes.byteOffset + offset + 32, bytes.byteOffset + offset + record));
      this.vectors.set(key, Array.from(values));
    }
  }

  describe(signal?: AbortSignal): Promise<EmbeddingModelLock> {
    return this.inner.describe(signal);
  }

  embedQuery(text: string, signal?: AbortSignal): Promise<number[]> {
    let vector = this.queries.get(text);
    if (!vector) {
      vector = this.inner.embedQuery(text, signal);
      this.queries.set(text, vector);
      vector.catch(() => this.queries.delete(text));
    }
    return vector;
  }

  async embedDocuments(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    const keys = texts.map((text) => createHash('sha256').update(text).digest());
    const missing = keys.flatMap((key, position) => (this.vectors.has(key.toString('hex')) ? [] : [position]));
    this.counts.cached += texts.length - missing.length;
    this.counts.embedded += missing.length;
    if (missing.length > 0) {
      const fresh = await this.inner.embedDocuments(missing.map((position) => texts[position]!), signal);
      const records = fresh.map((vector, i) => {
        const key = keys[missing[i]!]!;
        // Stored as the float32 the file holds, so a cached run and a fresh one give the same vectors.
        const values = Float32Array.from(vector);
        this.vectors.set(key.toString('hex'), Array.from(values));
        return Buffer.concat([key, Buffer.from(values.buffer)]);
      });
      await appendFile(this.file, Buffer.concat(records));
    }
    return keys.map((key) => this.vectors.get(key.toString('hex'))!);
  }
}
