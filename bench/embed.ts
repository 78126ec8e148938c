/**
 * The seed's embedding-server benchmark, ported: for each embedder, the p50 latency of one short text
 * (the query path), the throughput on 100 chunks of 1200 characters, the ingest's default CHUNK_SIZE (the
 * ingestion path), and the seed's sanity check: a paraphrase pair must score above an unrelated pair.
 *
 *   pnpm exec tsx bench/embed.ts --url http://embed-tei:8080 [--api-key KEY] [--model NAME] [--write]
 *   EMBED_MODEL=packages/core/test/fixtures/models/model2vec-test-bge-base-vq pnpm exec tsx bench/embed.ts
 *   pnpm models:fetch && EMBED_MODEL=.cache/models/all-minilm-l6-v2,.cache/models/minilm-l6-static pnpm exec tsx bench/embed.ts
 *   pnpm exec tsx bench/embed.ts --fake-tei     (the test suite's fake TEI, in process: proves the HTTP path only)
 *
 * `--url` takes any TEI or OpenAI-compatible embeddings server (POST /v1/embeddings, Bearer key); EMBED_MODEL
 * (comma-separated for several) names local models, chosen as the service chooses them (ONNX folder or hub
 * id, Model2Vec folder). `--batch-size` (default 32, TEI's --max-client-batch-size) splits the 100 chunks
 * into requests. `--write` replaces the "Embedding servers" section of bench/results.md.
 */
import { readdir, readFile, rm, mkdtemp } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createEmbedder } from '../packages/core/src/adapters-from-config.ts';
import { loadConfig } from '../packages/core/src/config.ts';
import type { Embedder } from '../packages/core/src/embedders/embedder.ts';
import { createLogger } from '../packages/core/src/logger.ts';
import { closeFakeServers, startFakeServer } from '../packages/core/test/adapters/fake-server.ts';
import { teiEmbed } from '../services/retrieval/test/fakes/fake-tei.ts';
import { writeResultsSection } from './results-file.ts';

const SECTION = '## Embedding servers';
const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));
const SHORT_TEXT = 'Pod keeps restarting';
/** The seed's own example of what a dense vector captures: the same meaning with no word in common. */
const PARAPHRASE: [string, string] = ['Pod keeps restarting', 'CrashLoopBackOff troubleshooting'];
const UNRELATED = 'Quarterly invoice totals for the marketing budget';
const SHORT_RUNS = 30;
const BATCH_CHUNKS = 100;
/** The batch is timed this many times and the median kept (a shared machine is noisy). */
const BATCH_RUNS = Number(process.env.BENCH_BATCH_RUNS ?? 3);
/** The ingest's default CHUNK_SIZE: what one document chunk costs to embed. */
const CHUNK_CHARACTERS = 1200;

interface Target {
  name: string;
  kind: string;
  env: Record<string, string>;
}

interface Measurement {
  target: Target;
  dimension: number;
  loadSeconds: number;
  shortP50Ms: number;
  batchSeconds: number;
  paraphrase: number;
  unrelated: number;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  a.forEach((x, i) => {
    dot += x * b[i]!;
    na += x * x;
    nb += b[i]! * b[i]!;
  });
  return dot / Math.sqrt(na * nb);
}

/** 100 chunks of consecutive words of this repository's README and docs, each at most 1200 characters (wrapping around when short). */
async function batchTexts(): Promise<string[]> {
  const files = ['README.md', ...(await readdir(join(repositoryRoot, 'docs'))).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];
  const words = (await Promise.all(files.map((file) => readFile(join(repositoryRoot, file), 'utf8')))).join('\n').split(/\s+/).filter(Boolean);
  const chunks: string[] = [];
  let next = 0;
  while (chunks.length < BATCH_CHUNKS) {
    let chunk = words[next++ % words.length]!.slice(0, CHUNK_CHARACTERS);
    while (chunk.length + 1 + words[next % words.length]!.length <= CHUNK_CHARACTERS) chunk += ` ${words[next++ % words.length]}`;
    chunks.push(chunk);
  }
  return chunks;
}

async function measure(target: Target, texts: string[], dataDir: string): Promise<Measurement> {
  const config = loadConfig({ ...target.env, RAG_DATA_DIR: dataDir });
  const embedder = (await createEmbedder(config, createLogger('silent'))) as Embedder;
  let started = performance.now();
  const { dimension } = await embedder.describe();
  const loadSeconds = (performance.now() - started) / 1000;
  await embedder.embedQuery(SHORT_TEXT); // warm-up
  const shortMs: number[] = [];
  for (let i = 0; i < SHORT_RUNS; i++) {
    started = performance.now();
    await embedder.embedQuery(SHORT_TEXT);
    shortMs.push(performance.now() - started);
  }
  const batchRuns: number[] = [];
  for (let run = 0; run < BATCH_RUNS; run++) {
    started = performance.now();
    await embedder.embedDocuments(texts);
    batchRuns.push((performance.now() - started) / 1000);
  }
  const batchSeconds = percentile(batchRuns, 50);
  const [a, b, c] = await embedder.embedDocuments([PARAPHRASE[0], PARAPHRASE[1], UNRELATED]);
  return { target, dimension, loadSeconds, shortP50Ms: percentile(shortMs, 50), batchSeconds, paraphrase: cosine(a!, b!), unrelated: cosine(a!, c!) };
}

function row(m: Measurement): string {
  const sanity = m.paraphrase > m.unrelated ? 'pass' : 'fail';
  const chunksPerSecond = BATCH_CHUNKS / m.batchSeconds;
  return `| ${m.target.name} | ${m.target.kind} | ${m.dimension} | ${m.loadSeconds.toFixed(2)} s | ${m.shortP50Ms.toFixed(2)} | ${m.batchSeconds.toFixed(2)} s | ${chunksPerSecond.toFixed(chunksPerSecond < 100 ? 1 : 0)} | ${m.paraphrase.toFixed(3)} / ${m.unrelated.toFixed(3)} ${sanity} |`;
}

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    'api-key': { type: 'string' },
    model: { type: 'string' },
    'batch-size': { type: 'string', default: '32' },
    'fake-tei': { type: 'boolean', default: false },
    write: { type: 'boolean', default: false },
  },
});

function prefixesAndTimeout(): Record<string, string> {
  const names = ['EMBED_QUERY_PREFIX', 'EMBED_PASSAGE_PREFIX', 'EMBED_TIMEOUT_MS'] as const;
  return Object.fromEntries(names.flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : [])));
}

const targets: Target[] = [];
const batchSize = args['batch-size']!;
if (args.url) {
  targets.push({
    name: args.model ?? args.url,
    kind: `HTTP ${args.url}`,
    // A model trained with task prefixes (nomic-embed-text-v1.5) and a CPU server's timeout come from the environment, as for the service.
    env: { ...prefixesAndTimeout(), EMBED_URL: args.url, EMBED_BATCH_SIZE: batchSize, ...(args['api-key'] ? { EMBED_API_KEY: args['api-key'] } : {}), ...(args.model ? { EMBED_MODEL: args.model } : {}) },
  });
}
if (args['fake-tei']) {
  const fake = await startFakeServer(teiEmbed);
  targets.push({ name: 'fake TEI (hashed bag of words, the tests\' fake)', kind: 'HTTP, in process', env: { EMBED_URL: fake.url, EMBED_MODEL: 'fake', EMBED_BATCH_SIZE: batchSize } });
}
for (const model of (process.env.EMBED_MODEL ?? '').split(',').map((m) => m.trim()).filter(Boolean)) {
  targets.push({ name: model, kind: 'local', env: { EMBED_MODEL: model, EMBED_BATCH_SIZE: batchSize } });
}
if (targets.length === 0) {
  console.error('Nothing to measure: pass --url (with --api-key, --model), --fake-tei, or set EMBED_MODEL to local models (comma-separated).');
  process.exit(2);
}

const texts = await batchTexts();
const dataDir = await mkdtemp(join(tmpdir(), 'rag-bench-embed-'));
const measurements: Measurement[] = [];
try {
  for (const target of targets) {
    console.error(`measuring ${target.name} …`);
    measurements.push(await measure(target, texts, dataDir));
    console.error(row(measurements.at(-1)!));
  }
} finally {
  await closeFakeServers();
  await rm(dataDir, { recursive: true, force: true });
}

const cpu = cpus();
const header = [
  '| embedder | runs | dimension | load + first call | short text p50 (ms) | 100 chunks × 1200 chars | chunks/s | paraphrase / unrelated cosine |',
  '| --- | --- | --- | --- | --- | --- | --- | --- |',
];
const section = [
  SECTION,
  '',
  `\`pnpm exec tsx bench/embed.ts [--url URL --api-key KEY --model NAME] [--fake-tei] --write\`, local models from \`EMBED_MODEL\` (comma-separated). Measured ${new Date().toISOString().slice(0, 10)} on ${cpu.length} CPU cores (${cpu[0]?.model.trim()}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, batch size ${batchSize} per request; load average ${loadavg()[0]!.toFixed(1)} at the end (a machine shared with other work: compare rows of one run, not runs).`,
  '',
  `Short text: \`embedQuery("${SHORT_TEXT}")\`, ${SHORT_RUNS} sequential calls after one warm-up. Batch: \`embedDocuments\` of ${BATCH_CHUNKS} chunks of this repository's README and docs, consecutive words up to ${CHUNK_CHARACTERS} characters each (the ingest's default CHUNK_SIZE; about 250 to 300 WordPiece tokens), the median of ${BATCH_RUNS} runs. Sanity, the seed's check: the cosine of its own paraphrase example ("${PARAPHRASE[0]}" / "${PARAPHRASE[1]}", no word in common) must exceed that of an unrelated pair ("${PARAPHRASE[0]}" / "${UNRELATED}").`,
  '',
  ...header,
  ...measurements.map(row),
  '',
  'Reading. The `.cache/models` rows are real weights, built by `pnpm models:fetch` (scripts/models/README.md): sentence-transformers/all-MiniLM-L6-v2 exported to ONNX and run by transformers.js with one intra-op thread, as the service runs it (each chunk truncated at 256 tokens, the length the model was trained on), and a Model2Vec static model distilled from it (256 dimensions). Both match their Python libraries (cosine ≥ 0.999 per text, packages/core/test/embedders/*.real.test.ts), so these rows are the models\' own speed and similarities on this shared machine. The fixture rows prove the benchmark and the two code paths, not speed or quality. `tiny-random-bert` has random weights: its cosines are chance (random BERT outputs all point roughly the same way, so both are high and a few thousandths apart), and it fails or passes the sanity check by such a margin either way; the check means something only for a trained model. The Model2Vec test model is real but small and vocabulary-quantised: it passes by a wide margin on the seed\'s pair. Its cost is the tokenizer (transformers.js), the lookup itself being a table sum. The fake TEI row proves the HTTP path (`TeiEmbedder`: batches of the batch size, Bearer key, the OpenAI-compatible answer) and measures the client and loopback, not a model: its "embedding" is a hashed bag of words, so a pair with no word in common scores 0 and fails. For the production model run it with `--url` against the TEI. The seed measured there (Qwen3-Embedding-0.6B on TEI\'s ONNX backend, e2-standard-4): about 110 ms for one short embedding (its budget was 100 ms) and about 180 tokens/s, under one 1200-character chunk a second, so 100 chunks take minutes (its plan had said under 5 s); llama.cpp took about 3.3 s for a 4-token request, and TEI was six times faster.',
  '',
].join('\n');
console.log(section);
if (args.write) await writeResultsSection(SECTION, section);
