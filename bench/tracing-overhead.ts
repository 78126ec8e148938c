/**
 * What tracing costs the query path: /search on the embedded stack (the handbook in LanceDB, sparse
 * leg, the real app) with tracing off, on with every trace sampled (OTEL_TRACES_SAMPLER_ARG=1) and on
 * at 10% (parentbased_traceidratio 0.1), in one process and one run, so the three share the machine's
 * state. Spans go through the real BatchSpanProcessor and OTLP/HTTP protobuf exporter to a receiver on
 * port 0 that reads and drops them. The modes alternate in short rounds, so that the drift of a shared
 * machine falls on all three alike.
 *
 *   pnpm exec tsx bench/tracing-overhead.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import { writeResultsSection } from './results-file.ts';
import { runAutocannon } from './search-load.ts';
import { loadConfig, startTracing, type Tracing } from '../packages/core/src/index.ts';
import { startTestStack } from '../services/retrieval/test/test-stack.ts';

const QUERIES = [
  'How many vacation days do new employees get?',
  'who approves expenses',
  'how are backups restored',
  'what is the on-call rotation',
  'where do I find the onboarding checklist',
  'how long are backups kept',
];
/** Sequential: modes alternate every ROUND_REQUESTS requests, ROUNDS times, so the machine's drift (it is shared) hits all three alike. */
const ROUNDS = 12;
const ROUND_REQUESTS = 36;
/** Load: autocannon passes, alternating modes. */
const LOAD_PASSES = 3;
const LOAD_SECONDS = 4;
const CONNECTIONS = 10;

type Mode = { name: string; env: Record<string, string> | undefined };
const MODES: Mode[] = [
  { name: 'off (no endpoint)', env: undefined },
  { name: 'on, ratio 1', env: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' } },
  { name: 'on, ratio 0.1', env: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' } },
];

interface Row {
  mode: string;
  sequentialP50: number;
  sequentialP95: number;
  /** autocannon's average req/s of each load pass. */
  requestsPerSecond: number[];
  exports: number;
}

function percentile(sorted: number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)] ?? Number.NaN;
}

async function main(): Promise<void> {
  let exports = 0;
  const receiver = createServer(async (request, response) => {
    for await (const _ of request); // read and dropped
    exports += 1;
    response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const stack = await startTestStack();
  const latencies = new Map<string, number[]>(MODES.map((mode) => [mode.name, []]));
  const rates = new Map<string, number[]>(MODES.map((mode) => [mode.name, []]));
  const exported = new Map<string, number>(MODES.map((mode) => [mode.name, 0]));
  const search = (query: string) =>
    fetch(`${stack.baseUrl}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) }).then((response) => response.text());
  const inMode = async (mode: Mode, work: () => Promise<void>) => {
    const tracing: Tracing = startTracing(loadConfig(mode.env ? { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, ...mode.env } : {}), { serviceName: 'bench' });
    const before = exports;
    try {
      await work();
      await tracing.forceFlush();
    } finally {
      await tracing.shutdown();
      exported.set(mode.name, exported.get(mode.name)! + exports - before);
    }
  };
  try {
    for (const query of QUERIES) await search(query); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of MODES) {
        await inMode(mode, async () => {
          for (let i = 0; i < ROUND_REQUESTS; i++) {
            const started = performance.now();
            await search(QUERIES[i % QUERIES.length]!);
            latencies.get(mode.name)!.push(performance.now() - started);
          }
        });
      }
    }
    for (let pass = 0; pass < LOAD_PASSES; pass++) {
      for (const mode of MODES) {
        await inMode(mode, async () => {
          const load = await runAutocannon({ url: stack.baseUrl, queries: QUERIES, connections: CONNECTIONS, seconds: LOAD_SECONDS });
          rates.get(mode.name)!.push(load.requests.average);
        });
      }
    }
  } finally {
    await stack.close();
    receiver.close();
  }
  const rows: Row[] = MODES.map((mode) => {
    const sorted = [...latencies.get(mode.name)!].sort((a, b) => a - b);
    return { mode: mode.name, sequentialP50: percentile(sorted, 0.5), sequentialP95: percentile(sorted, 0.95), requestsPerSecond: rates.get(mode.name)!, exports: exported.get(mode.name)! };
  });
  for (const row of rows) console.log(JSON.stringify(row));
  await writeResultsSection('## Tracing overhead', section(rows));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function section(rows: Row[]): string {
  const lines = [
    '## Tracing overhead',
    '',
    `\`pnpm exec tsx bench/tracing-overhead.ts\` (${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${cpus().length} CPUs shared with other jobs): POST /search on the embedded stack (handbook fixture, LanceDB, BM25 leg), the real app; spans through the BatchSpanProcessor and the OTLP/HTTP protobuf exporter to a local receiver. Sequential: the three modes alternate every ${ROUND_REQUESTS} requests, ${ROUNDS} rounds (${ROUNDS * ROUND_REQUESTS} requests each), one request at a time. Load: autocannon, ${CONNECTIONS} connections, ${LOAD_SECONDS} s, ${LOAD_PASSES} alternating passes per mode.`,
    '',
    '| mode | sequential p50 ms | sequential p95 ms | load req/s (median; each pass) | OTLP exports |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row.mode} | ${row.sequentialP50.toFixed(2)} | ${row.sequentialP95.toFixed(2)} | ${median(row.requestsPerSecond).toFixed(0)} (${row.requestsPerSecond.map((rate) => rate.toFixed(0)).join(', ')}) | ${row.exports} |`),
    '',
  ];
  return lines.join('\n');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
