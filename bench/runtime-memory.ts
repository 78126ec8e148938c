/**
 * Memory of the production process: the compiled server (`node dist/retrieval/server.js`, run from a
 * folder without node_modules, as in the image) in Qdrant mode, with QDRANT_URL, EMBED_URL, RERANK_URL
 * and GATEWAY_URL pointed at local servers that speak those APIs (the test fakes). The argo-cd docs of
 * ../shared/corpora are ingested first with the compiled ingest CLI (its peak RSS is recorded too).
 * For each variant of the server: RSS at idle, after 300 sequential POST /search, after 3,000 more
 * from 10 concurrent clients, and the peak (VmHWM), read from /proc. `--write` replaces the
 * "Runtime memory" section of bench/results.md; k8s/rag/retrieval/deployment.yaml's requests and
 * limits are set from it.
 *
 *   scripts/with-image-node.sh pnpm exec tsx bench/runtime-memory.ts [--write]   (the image's Node)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeServer } from '../packages/core/test/adapters/fake-server.ts';
import { buildAll } from '../scripts/build.ts';
import { FakeGateway } from '../services/retrieval/test/fakes/fake-gateway.ts';
import { FakeQdrant } from '../services/retrieval/test/fakes/fake-qdrant.ts';
import { teiEmbed, teiRerank } from '../services/retrieval/test/fakes/fake-tei.ts';
import { writeResultsSection } from './results-file.ts';

const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));
const corpus = join(repositoryRoot, '../shared/corpora/argo-cd-docs');
const SECTION = '## Runtime memory: the API in Qdrant mode';
const SEQUENTIAL_SEARCHES = 300;
const CONCURRENT_SEARCHES = 3_000;
const CONCURRENCY = 10;

interface Variant {
  name: string;
  command: string[];
  env?: Record<string, string>;
}

interface Reading {
  requestsPerSecond: number;
  idle: number;
  afterSequential: number;
  afterConcurrent: number;
  peak: number;
}

/** VmRSS and VmHWM of a process, in MiB. */
async function memoryOf(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', resolve)));
}

/** Runs the compiled ingest CLI, polling its peak RSS until it exits. */
async function ingestCorpus(outRoot: string, env: Record<string, string>): Promise<{ line: string; peak: number }> {
  const child = spawn(process.execPath, [join(outRoot, 'ingest/cli.js'), corpus], { env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env } });
  let stdout = '';
  child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
  child.stderr.pipe(process.stderr);
  let peak = 0;
  const poll = setInterval(() => {
    memoryOf(child.pid!).then((memory) => (peak = Math.max(peak, memory.peak)), () => undefined);
  }, 50);
  const code = await exitOf(child);
  clearInterval(poll);
  if (code !== 0) throw new Error(`ingest exited ${code}: ${stdout}`);
  return { line: stdout.trim().split('\n').at(-1) ?? '', peak };
}

function startServer(variant: Variant, env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const [command, ...args] = variant.command;
  const child = spawn(command!, args, { cwd: repositoryRoot, env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', PORT: '0', ...env, ...variant.env } });
  child.stderr!.pipe(process.stderr);
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (data: Buffer) => {
      output += data.toString();
      const url = /listening on (http:\/\/[\d.]+:\d+)/.exec(output)?.[1];
      if (url) resolve({ child, url });
    });
    child.once('exit', (code) => reject(new Error(`${variant.name} exited ${code} before listening: ${output}`)));
  });
}

async function search(url: string, query: string): Promise<void> {
  const response = await fetch(`${url}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
  if (response.status !== 200) throw new Error(`POST /search answered ${response.status}: ${await response.text()}`);
  await response.arrayBuffer();
}

/** The corpus's first-level headings, as questions: varied terms, so the searches touch many postings. */
async function corpusQuestions(): Promise<string[]> {
  const files = (await readdir(corpus, { recursive: true })).filter((file) => file.endsWith('.md'));
  const questions: string[] = [];
  for (const file of files) {
    const heading = /^#{1,2} (.+)$/m.exec(await readFile(join(corpus, file), 'utf8'))?.[1];
    if (heading) questions.push(`how do I use ${heading.toLowerCase()}?`);
  }
  return questions;
}

async function measureVariant(variant: Variant, env: Record<string, string>, questions: string[]): Promise<Reading> {
  const { child, url } = await startServer(variant, env);
  try {
    const pid = child.pid!;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const idle = (await memoryOf(pid)).rss;
    for (let index = 0; index < SEQUENTIAL_SEARCHES; index += 1) await search(url, questions[index % questions.length]!);
    const afterSequential = (await memoryOf(pid)).rss;
    let next = 0;
    const client = async () => {
      while (next < CONCURRENT_SEARCHES) await search(url, questions[next++ % questions.length]!);
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, client));
    const requestsPerSecond = CONCURRENT_SEARCHES / ((performance.now() - started) / 1000);
    const { rss: afterConcurrent, peak } = await memoryOf(pid);
    return { requestsPerSecond, idle, afterSequential, afterConcurrent, peak };
  } finally {
    child.kill('SIGTERM');
    await exitOf(child);
  }
}

function report(ingest: { line: string; peak: number }, readings: Array<[Variant, Reading]>): string {
  const mib = (value: number) => value.toFixed(0);
  const rows = readings.map(
    ([variant, reading]) =>
      `| ${variant.name} | ${mib(reading.idle)} | ${mib(reading.afterSequential)} | ${mib(reading.afterConcurrent)} | ${mib(reading.peak)} | ${reading.requestsPerSecond.toFixed(0)} |`,
  );
  return `${SECTION}

\`pnpm exec tsx bench/runtime-memory.ts --write\` on ${cpus().length} cores (${cpus()[0]?.model.trim()}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}.
The compiled bundles are built into a folder without node_modules (as in the images); QDRANT_URL, EMBED_URL, RERANK_URL and GATEWAY_URL point at local servers speaking those APIs (the test fakes, in the benchmark's own process). The argo-cd docs are ingested first with the compiled ingest CLI: \`${ingest.line}\`, peak RSS ${mib(ingest.peak)} MiB.
Each server then answers ${SEQUENTIAL_SEARCHES} sequential POST /search (embed, Qdrant hybrid query, rerank of 50 candidates) and ${CONCURRENT_SEARCHES.toLocaleString('en')} more from ${CONCURRENCY} concurrent clients. RSS (VmRSS) and peak (VmHWM) from /proc, MiB:

| server | idle | after ${SEQUENTIAL_SEARCHES} searches | after ${CONCURRENT_SEARCHES.toLocaleString('en')} concurrent | peak | concurrent req/s |
| --- | --- | --- | --- | --- | --- |
${rows.join('\n')}

The request rate is bounded by the fakes, which score every query in the benchmark's own process: it is shown to confirm that the image's V8 flags cost the server no throughput, not as the API's capacity ("Query path: argo-cd docs" measures that). Without the flags V8 lets the heap grow to several hundred MiB before collecting, compiled or from source; \`--enable-source-maps\` also keeps the bundle's parsed maps, so the image runs without it and ships no .map files. Issue 8 measured about 340 MiB at idle and after 300 searches for the process before the lazy adapter imports, which loaded LanceDB, ONNX Runtime and transformers.js without calling them. The Deployment requests the image's peak plus about a quarter and limits at twice the request (k8s/rag/retrieval/deployment.yaml).
`;
}

/** The V8 flags the Dockerfile's retrieval stage sets in NODE_OPTIONS, so the benchmark measures what ships. */
async function retrievalImageNodeOptions(): Promise<string[]> {
  const dockerfile = await readFile(join(repositoryRoot, 'Dockerfile'), 'utf8');
  const options = /FROM runtime AS retrieval[\s\S]*?NODE_OPTIONS="([^"]+)"/.exec(dockerfile)?.[1];
  if (!options) throw new Error('the Dockerfile\'s retrieval stage sets no NODE_OPTIONS="..."');
  return options.split(/\s+/);
}

async function main(): Promise<void> {
  if (!existsSync(corpus)) {
    console.error(`bench/runtime-memory.ts needs ${corpus} (it comes with ../shared/corpora); it is absent, nothing measured.`);
    process.exit(1);
  }
  const outRoot = await mkdtemp(join(tmpdir(), 'rag-bench-dist-'));
  try {
    await buildAll(outRoot);
    const env = {
      QDRANT_URL: (await startFakeServer(new FakeQdrant().handle)).url,
      EMBED_URL: (await startFakeServer(teiEmbed)).url,
      EMBED_MODEL: 'fake/hashed-bag-of-words',
      RERANK_URL: (await startFakeServer(teiRerank)).url,
      GATEWAY_URL: (await startFakeServer(new FakeGateway().handle)).url,
      // The searches below come from one address, faster than the open API's default limit allows.
      RAG_RATE_LIMIT_PER_ADDRESS: '0',
    };
    const ingest = await ingestCorpus(outRoot, env);
    console.error(ingest.line);
    const questions = await corpusQuestions();
    const server = join(outRoot, 'retrieval/server.js');
    const imageOptions = await retrievalImageNodeOptions();
    const variants: Variant[] = [
      { name: `compiled, as the retrieval image runs it (\`${imageOptions.join(' ')}\`)`, command: [process.execPath, ...imageOptions, server] },
      { name: 'compiled, V8 defaults', command: [process.execPath, server] },
      { name: 'compiled, `--enable-source-maps`', command: [process.execPath, '--enable-source-maps', server] },
      { name: 'from source (`--import tsx`, development)', command: [process.execPath, '--import', 'tsx', 'services/retrieval/src/server.ts'] },
    ];
    const readings: Array<[Variant, Reading]> = [];
    for (const variant of variants) {
      const reading = await measureVariant(variant, env, questions);
      console.error(variant.name, reading);
      readings.push([variant, reading]);
    }
    const section = report(ingest, readings);
    process.stdout.write(section);
    if (process.argv.includes('--write')) await writeResultsSection(SECTION, section);
  } finally {
    await rm(outRoot, { recursive: true, force: true });
  }
  process.exit(0);
}

await main();
