/**
 * Real dense vectors for the ANN benchmarks (bench/ann-recall-real.ts, bench/dense-scale.ts): passages and
 * questions embedded once with a real model (EMBED_MODEL, default all-MiniLM-L6-v2 fetched by
 * `pnpm models:fetch`) and kept on disk under .cache/bench-embeddings through the eval harness's own cache
 * (eval/src/embedding-cache.ts: one file per model, SHA-256 of the text → float32 vector), so a second
 * run embeds nothing. The folder starts as a copy of the eval ladder's cache, whose passages overlap.
 *
 * Passages are chunked exactly as the ingest job chunks them (chunkMarkdown, CHUNK_SIZE 1200, overlap 200,
 * the `<source> > <headings>` prefix included), so the vectors are those an ingest would store.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chunkMarkdown } from '../packages/core/src/chunking/chunk-markdown.ts';
import { LocalOnnxEmbedder } from '../packages/core/src/embedders/local-onnx.ts';
import { CachedEmbedder } from '../eval/src/embedding-cache.ts';
import { ARGO_CD_QUESTIONS, goldenQuestions, markdownFiles } from './argo-cd-queries.ts';

export const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));
export const ARGO_CD_CORPUS = join(repositoryRoot, '../shared/corpora/argo-cd-docs');
export const SCIFACT_CORPUS = join(repositoryRoot, '../shared/corpora/beir-scifact');
export const DEFAULT_MODEL = '.cache/models/all-minilm-l6-v2';
const CACHE = join(repositoryRoot, '.cache/bench-embeddings');
const EVAL_CACHE = join(repositoryRoot, '.cache/eval-embeddings');
/** The ingest's defaults (CHUNK_SIZE, CHUNK_OVERLAP): the chunks an ingest of these folders stores. */
const CHUNKING = { chunkSize: 1200, chunkOverlap: 200 };
const GOLDEN_SETS = ['eval/golden/project-docs.yaml', 'eval/golden/vllm-gke.yaml'].map((path) => join(repositoryRoot, path));

export interface Passage {
  corpus: 'argo-cd' | 'scifact';
  source: string;
  text: string;
}

/**
 * Passage vectors the eval ladder already computed with `model` (eval/src/embedding-cache.ts's file in
 * .cache/eval-embeddings): the chunks of the golden sets' corpora (the project's docs, nimbus-faq, vllm-gke),
 * distinct texts of other real documents, read without their texts. Empty when the ladder has not run.
 */
export async function evalLadderVectors(dimension: number, model = process.env.EMBED_MODEL || DEFAULT_MODEL): Promise<Float32Array[]> {
  const file = join(EVAL_CACHE, `${createHash('sha256').update(`${model}\n${dimension}`).digest('hex').slice(0, 16)}.f32`);
  if (!existsSync(file)) return [];
  const bytes = await readFile(file);
  const record = 32 + 4 * dimension;
  const vectors: Float32Array[] = [];
  for (let offset = 0; offset + record <= bytes.length; offset += record) vectors.push(new Float32Array(bytes.buffer.slice(bytes.byteOffset + offset + 32, bytes.byteOffset + offset + record)));
  return vectors;
}

/** The embedder the benchmarks share: the real model behind the on-disk cache. */
export async function cachedModel(model = process.env.EMBED_MODEL || DEFAULT_MODEL): Promise<CachedEmbedder> {
  await mkdir(CACHE, { recursive: true });
  if (existsSync(EVAL_CACHE)) {
    for (const file of await readdir(EVAL_CACHE)) if (!existsSync(join(CACHE, file))) await copyFile(join(EVAL_CACHE, file), join(CACHE, file));
  }
  return CachedEmbedder.open(new LocalOnnxEmbedder({ model, allowRemote: false }), CACHE);
}

/** Every chunk of the argo-cd docs, with the source an ingest of the folder gives (its path relative to the folder). */
export async function argoCdPassages(root = ARGO_CD_CORPUS): Promise<Passage[]> {
  const passages: Passage[] = [];
  for (const path of (await markdownFiles(root)).sort()) {
    const source = relative(root, path);
    for (const chunk of chunkMarkdown(await readFile(path, 'utf8'), source, CHUNKING)) passages.push({ corpus: 'argo-cd', source, text: chunk.text });
  }
  return passages;
}

/** BEIR SciFact's abstracts as the eval harness indexes them (eval/src/beir.ts): `# title`, then the text. */
export async function scifactPassages(dir = SCIFACT_CORPUS): Promise<Passage[]> {
  const passages: Passage[] = [];
  for await (const entry of jsonLines(join(dir, 'corpus.jsonl'))) {
    const title = String(entry['title'] ?? '').trim();
    const text = String(entry['text'] ?? '').trim();
    const source = String(entry['_id']);
    for (const chunk of chunkMarkdown(title ? `# ${title}\n\n${text}\n` : `${text}\n`, source, CHUNKING)) passages.push({ corpus: 'scifact', source, text: chunk.text });
  }
  return passages;
}

/** Questions users would ask of the argo-cd corpus and the golden sets (bench/argo-cd-queries.ts's question load). */
export async function argoCdQuestions(): Promise<string[]> {
  return [...(await goldenQuestions(GOLDEN_SETS)), ...ARGO_CD_QUESTIONS];
}

/** SciFact's 300 test queries (the claims its qrels judge). */
export async function scifactQueries(dir = SCIFACT_CORPUS): Promise<string[]> {
  const wanted = new Set((await readFile(join(dir, 'qrels/test.tsv'), 'utf8')).split('\n').slice(1).map((row) => row.split('\t')[0]).filter(Boolean));
  const queries: string[] = [];
  for await (const entry of jsonLines(join(dir, 'queries.jsonl'))) if (wanted.has(String(entry['_id']))) queries.push(String(entry['text']));
  return queries;
}

/** Vectors of `texts` (as passages), embedded in batches of 32 and cached; progress on stderr. */
export async function passageVectors(embedder: CachedEmbedder, texts: string[], label: string): Promise<number[][]> {
  const vectors: number[][] = [];
  const started = performance.now();
  for (let start = 0; start < texts.length; start += 256) {
    vectors.push(...(await embedder.embedDocuments(texts.slice(start, start + 256))));
    if (embedder.counts.embedded > 0 && (start / 256) % 8 === 0) {
      console.error(`${label}: ${vectors.length}/${texts.length} (${embedder.counts.embedded} embedded, ${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
  }
  return vectors;
}

/**
 * Query vectors, cached on disk like passages: all-MiniLM-L6-v2 has no query prefix, so a query's vector
 * is the one embedDocuments gives it (asserted here for the first query, so a model with prefixes fails loudly).
 */
export async function queryVectors(embedder: CachedEmbedder, queries: string[]): Promise<number[][]> {
  const vectors = await embedder.embedDocuments(queries);
  const direct = await embedder.embedQuery(queries[0]!);
  if (direct.some((value, i) => Math.abs(value - vectors[0]![i]!) > 1e-4)) throw new Error('this model embeds queries differently from passages: cache queries apart');
  return vectors;
}

async function* jsonLines(file: string): AsyncGenerator<Record<string, unknown>> {
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) if (line.trim() !== '') yield JSON.parse(line) as Record<string, unknown>;
}
