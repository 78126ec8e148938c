/**
 * What tracing costs the query path: /search on the embedded stack (the handbook in LanceDB, sparse
 * leg, the real app) with tracing off, on with every trace sampled (OTEL_TRACES_SAMPLER_ARG=1) and on
 * at 10% (parentbased_traceidratio 0.1), in one process and one run, so the three share the machine's
 * state. Spans go through the real BatchSpanProcessor and OTLP/HTTP protobuf exporter to a receiver on
 * port 0 that reads and drops them. The modes are run in two interleaved passes; each row is one pass.
 *
 *   pnpm exec tsx bench/tracing-overhead.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import { writeResultsSection } from './results-file.ts';
import { measure, runAutocannon, type Distribution } from './search-load.ts';
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
const PASSES = 2;
const LOAD_SECONDS = 5;
const CONNECTIONS = 10;

type Mode = { name: string; env: Record<string, string> | undefined };
const MODES: Mode[] = [
  { name: 'off (no endpoint)', env: undefined },
  { name: 'on, ratio 1', env: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' } },
  { name: 'on, ratio 0.1', env: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' } },
];

interface Row {
  mode: string;
  pass: number;
  sequential: Distribution;
  requestsPerSecond: number;
  loadP50: number;
  exports: number;
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
  const rows: Row[] = [];
  try {
    for (let pass = 1; pass <= PASSES; pass++) {
      for (const mode of MODES) {
        const tracing: Tracing = startTracing(loadConfig(mode.env ? { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, ...mode.env } : {}), { serviceName: 'bench' });
        const exportsBefore = exports;
        try {
          const search = (query: string) =>
            fetch(`${stack.baseUrl}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) }).then((response) => response.text());
          const sequential = await measure(QUERIES, search, 20);
          const load = await runAutocannon({ url: stack.baseUrl, queries: QUERIES, connections: CONNECTIONS, seconds: LOAD_SECONDS });
          await tracing.forceFlush();
          rows.push({ mode: mode.name, pass, sequential, requestsPerSecond: load.requests.average, loadP50: load.latency.p50, exports: exports - exportsBefore });
          console.log(JSON.stringify(rows.at(-1)));
        } finally {
          await tracing.shutdown();
        }
      }
    }
  } finally {
    await stack.close();
    receiver.close();
  }
  await writeResultsSection('## Tracing overhead', section(rows));
}

function section(rows: Row[]): string {
  const lines = [
    '## Tracing overhead',
    '',
    `\`pnpm exec tsx bench/tracing-overhead.ts\` (${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${cpus().length} CPUs shared with other jobs): POST /search on the embedded stack (handbook fixture, LanceDB, BM25 leg), the real app; spans through the BatchSpanProcessor and the OTLP/HTTP protobuf exporter to a local receiver. Sequential: ${QUERIES.length} queries × 20 rounds one at a time; load: autocannon, ${CONNECTIONS} connections, ${LOAD_SECONDS} s. Two interleaved passes.`,
    '',
    '| mode | pass | sequential p50 ms | sequential p95 ms | load req/s | load p50 ms | OTLP exports |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row.mode} | ${row.pass} | ${row.sequential.p50.toFixed(2)} | ${row.sequential.p95.toFixed(2)} | ${row.requestsPerSecond.toFixed(0)} | ${row.loadP50.toFixed(1)} | ${row.exports} |`),
    '',
  ];
  return lines.join('\n');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
