/**
 * N ingest workers against 1, as the Indexed Job of k8s/rag/jobs/backfill runs them: `rag-ingest --shard i/N`
 * as N separate processes, each with its own TEI replica (the Job's TEI sidecar), all writing to one
 * Qdrant, then one `--prune-only` run. Qdrant is the tests' in-memory fake of its REST API; each TEI replica
 * is the tests' fake TEI delayed to model a CPU replica: it embeds one request after the other at the
 * tokens/s written on the ingest CronJob (`rag.ingest/tei-tokens-per-second`, the seed's 180 for
 * Qwen3-Embedding-0.6B on an e2-standard-4) with the CronJob's characters per token, sped up by
 * --time-scale so that a run takes minutes, not hours. The workers take the CronJob's INGEST_CONCURRENCY,
 * EMBED_BATCH_SIZE and EMBED_TIMEOUT_MS. `--write` replaces the section of bench/results.md.
 *
 *   pnpm exec tsx bench/ingest-shards.ts [--workers 1,2,4] [--time-scale 100] [--write]
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { closeFakeServers, startFakeServer, type RecordedRequest } from '../packages/core/test/adapters/fake-server.ts';
import { FakeQdrant } from '../services/retrieval/test/fakes/fake-qdrant.ts';
import { teiEmbed } from '../services/retrieval/test/fakes/fake-tei.ts';
import { writeResultsSection } from './results-file.ts';

const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));
const corpus = join(repositoryRoot, '../shared/corpora/argo-cd-docs');
const SECTION = '## Ingestion scale-out: N workers against 1 (issue 19)';

/** The CronJob's written-down throughput and the job's embedding settings, read from its manifest. */
function cronJobSettings(): { tokensPerSecond: number; charactersPerToken: number; env: Record<string, string> } {
  const manifest = readFileSync(join(repositoryRoot, 'k8s/rag/ingest/cronjob.yaml'), 'utf8');
  const annotation = (name: string) => Number(new RegExp(`rag\\.ingest/${name}: "([\\d.]+)"`).exec(manifest)?.[1]);
  const variable = (name: string) => new RegExp(`- name: ${name}\\n\\s+value: "([^"]+)"`).exec(manifest)?.[1] ?? '';
  return {
    tokensPerSecond: annotation('tei-tokens-per-second'),
    charactersPerToken: annotation('characters-per-token'),
    env: Object.fromEntries(['INGEST_CONCURRENCY', 'EMBED_BATCH_SIZE', 'EMBED_TIMEOUT_MS'].map((name) => [name, variable(name)])),
  };
}

/** One CPU TEI replica: requests are embedded one after the other at `tokensPerSecond`. */
class ModelledTeiReplica {
  private busyUntil = 0;
  tokens = 0;

  constructor(
    private readonly tokensPerSecond: number,
    private readonly charactersPerToken: number,
  ) {}

  handle = async (request: RecordedRequest, response: Parameters<typeof teiEmbed>[1]): Promise<void> => {
    const input = (request.body as { input?: string[] } | undefined)?.input;
    if (request.method === 'POST' && Array.isArray(input)) {
      const tokens = input.reduce((sum, text) => sum + Math.ceil(text.length / this.charactersPerToken), 0);
      this.tokens += tokens;
      const now = performance.now();
      this.busyUntil = Math.max(now, this.busyUntil) + (tokens / this.tokensPerSecond) * 1000;
      await sleep(this.busyUntil - now);
    }
    teiEmbed(request, response);
  };
}

interface Worker {
  code: number | null;
  lines: string[];
  seconds: number;
}

function runCli(args: string[], env: Record<string, string>): Promise<Worker> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('pnpm', ['exec', 'tsx', 'ingest/src/cli.ts', ...args], { cwd: repositoryRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (part: Buffer) => (stdout += part.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, lines: stdout.trimEnd().split('\n'), seconds: (performance.now() - started) / 1000 }));
  });
}

interface Round {
  workers: number;
  wallSeconds: number;
  pruneSeconds: number;
  /** Points the prune-only run deleted: none, when the shards covered the corpus exactly. */
  pruneDeletes: number;
  points: number;
  tokens: number;
  /** Tokens the busiest TEI replica embedded: its share decides when the last worker ends. */
  largestShareTokens: number;
}

async function round(workers: number, scale: number): Promise<Round> {
  const settings = cronJobSettings();
  const qdrant = new FakeQdrant();
  const store = await startFakeServer(qdrant.handle);
  const replicas = Array.from({ length: workers }, () => new ModelledTeiReplica(settings.tokensPerSecond * scale, settings.charactersPerToken));
  const teis = await Promise.all(replicas.map((replica) => startFakeServer(replica.handle)));
  const base = { ...settings.env, QDRANT_URL: store.url, QDRANT_API_KEY: '', EMBED_MODEL: 'modelled-cpu-tei', EMBED_API_KEY: '', LOG_LEVEL: 'warn', GCS_BUCKET: '', DOCLING_URL: '', INGEST_SHARDS: '', JOB_COMPLETION_INDEX: '' };
  try {
    const started = performance.now();
    const shards = await Promise.all(teis.map((tei, index) => runCli([corpus, '--shard', `${index}/${workers}`], { ...base, EMBED_URL: tei.url })));
    const wallSeconds = (performance.now() - started) / 1000;
    for (const shard of shards) if (shard.code !== 0) throw new Error(`a worker exited ${shard.code}: ${shard.lines.slice(-3).join(' | ')}`);
    const prune = await runCli([corpus, '--prune-only'], { ...base, EMBED_URL: teis[0]!.url });
    if (prune.code !== 0) throw new Error(`the prune-only run exited ${prune.code}: ${prune.lines.slice(-3).join(' | ')}`);
    for (const shard of shards) console.error(`  ${shard.lines.slice(-2).join('  ')}  (${shard.seconds.toFixed(1)} s)`);
    console.error(`  prune-only: ${prune.lines.at(-1)} (${prune.seconds.toFixed(1)} s)`);
    return {
      workers,
      wallSeconds,
      pruneSeconds: prune.seconds,
      pruneDeletes: Number(/ (\d+) deletes/.exec(prune.lines.at(-1) ?? '')?.[1] ?? Number.NaN),
      points: qdrant.collections.get('docs-v2')?.points.size ?? 0,
      tokens: replicas.reduce((sum, replica) => sum + replica.tokens, 0),
      largestShareTokens: Math.max(...replicas.map((replica) => replica.tokens)),
    };
  } finally {
    await closeFakeServers();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { workers: { type: 'string', default: '1,2,4' }, 'time-scale': { type: 'string', default: '100' }, write: { type: 'boolean', default: false } } });
  if (!existsSync(corpus)) {
    console.log(`skipped: ${corpus} is absent (it comes with ../shared/corpora)`);
    return;
  }
  const scale = Number(values['time-scale']);
  const rounds: Round[] = [];
  for (const workers of values.workers.split(',').map(Number)) {
    console.error(`${workers} worker(s):`);
    rounds.push(await round(workers, scale));
  }
  const section = report(rounds, scale);
  console.log(section);
  if (values.write) await writeResultsSection(SECTION, section);
}

function report(rounds: Round[], scale: number): string {
  const settings = cronJobSettings();
  const single = rounds.find((round) => round.workers === 1) ?? rounds[0]!;
  const rows = rounds.map((round) => {
    const speedUp = single.wallSeconds / round.wallSeconds;
    const teiSeconds = round.largestShareTokens / (settings.tokensPerSecond * scale);
    const clusterHours = round.largestShareTokens / settings.tokensPerSecond / 3600;
    const modelledSpeedUp = single.largestShareTokens / round.largestShareTokens;
    return `| ${round.workers} | ${round.wallSeconds.toFixed(1)} s | ${speedUp.toFixed(2)}× (${(speedUp / round.workers * 100).toFixed(0)} %) | ${(round.largestShareTokens / round.tokens * 100).toFixed(1)} % of the tokens | ${teiSeconds.toFixed(1)} s | ${(round.wallSeconds - teiSeconds).toFixed(1)} s | ${round.pruneSeconds.toFixed(1)} s | ${round.points} | ${clusterHours.toFixed(2)} h (${modelledSpeedUp.toFixed(2)}×) |`;
  });
  const load = loadavg()[0]!.toFixed(1);
  return `${SECTION}

\`pnpm exec tsx bench/ingest-shards.ts --write\`: \`rag-ingest ../shared/corpora/argo-cd-docs --shard i/N\` (455 Markdown files) as N processes at once, each with its own TEI replica, into one Qdrant, then one \`--prune-only\` run. Qdrant is the tests' in-memory fake of its REST API (\`services/retrieval/test/fakes/fake-qdrant.ts\`); each TEI replica is the tests' fake TEI (\`fake-tei.ts\`) answering one request after the other at ${settings.tokensPerSecond} tokens/s (the ingest CronJob's \`rag.ingest/tei-tokens-per-second\`, the seed's CPU TEI) × ${scale} (\`--time-scale\`), counting ${settings.charactersPerToken} characters a token. Workers use the CronJob's settings (INGEST_CONCURRENCY ${settings.env.INGEST_CONCURRENCY}, EMBED_BATCH_SIZE ${settings.env.EMBED_BATCH_SIZE}). Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} CPU cores shared with other work (load average ${load} at the end), Node ${process.version}; ${single.tokens.toLocaleString('en-US')} tokens embedded per round.

Wall time is from starting the N processes to the last one's exit, start-up included; speed-up is 1 worker's wall time over N's (with its efficiency, speed-up per worker). The largest share is the busiest TEI replica's (shares come from a hash of each uri: near, not exactly, equal); its TEI time is what its modelled replica spent embedding, and the rest of the wall time is everything else (process start-up, listing, conversion, chunking, BM25, writes), which on this machine competes for 2 shared cores. The last column is the same corpus on the cluster, where the CPU TEI dominates: the largest share's tokens at ${settings.tokensPerSecond} tokens/s a replica, with the speed-up over one worker.

| workers | wall time | speed-up (efficiency) | largest share | its TEI time | the rest | prune-only | points | on the cluster, modelled |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}

${reading(rounds, scale)}
`;
}

/** What the rounds show, in words computed from them. */
function reading(rounds: Round[], scale: number): string {
  const settings = cronJobSettings();
  const first = rounds[0]!;
  const last = rounds.at(-1)!;
  const rest = (round: Round) => round.wallSeconds - round.largestShareTokens / (settings.tokensPerSecond * scale);
  const samePoints = rounds.every((round) => round.points === first.points && round.pruneDeletes === 0);
  return `Reading. From ${first.workers} to ${last.workers} workers the busiest worker's modelled TEI time fell ${(first.largestShareTokens / last.largestShareTokens).toFixed(2)}-fold (${last.workers} replicas, less the imbalance of the hashed shares: the busiest took ${(last.largestShareTokens / last.tokens * 100).toFixed(1)} % of the tokens, not ${(100 / last.workers).toFixed(1)} %); the rest of the wall time was ${rest(first).toFixed(1)} s with ${first.workers} worker${first.workers > 1 ? 's' : ''} and ${rest(last).toFixed(1)} s with ${last.workers}, in parallel on 2 shared cores. That rest does not grow with the TEI's slowness, so on the cluster, where one CPU replica embeds ${settings.tokensPerSecond} tokens/s and the same corpus is hours of embedding against seconds of the rest, the speed-up is the last column's. ${samePoints ? `Every round wrote the same ${first.points} points, and the prune-only run after it deleted none: the shares cover the corpus exactly once.` : 'The rounds wrote different numbers of points, or the prune-only run deleted some: the shares did not cover the corpus once.'} Past the TEI, the next limits are Qdrant's write rate (one node) and docling-serve for PDF and Office files (one replica), neither modelled here.`;
}

await main();
