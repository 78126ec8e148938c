/**
 * What bench/search-argo-cd.ts and bench/scale-argo-cd.ts measure the same way: the latency
 * distribution of a query set run one query at a time (`measure`), and POST /search under load from
 * autocannon (`runAutocannon`). Run directly, this module is autocannon's child process: it reads a
 * `LoadInput` as JSON on stdin and writes autocannon's result as JSON on stdout.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type autocannon from 'autocannon';

const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));

/** Measured passes over the whole query set, after one unmeasured warm-up pass (`measure`'s default). */
export const ROUNDS = 5;
/** `runAutocannon`'s defaults. */
export const HTTP_CONNECTIONS = 10;
export const HTTP_SECONDS = 10;

/** Latencies in milliseconds. */
export interface Distribution {
  count: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  perSecond: number;
}

export interface LoadInput {
  /** The server's base URL: the requests go to `${url}/search`. */
  url: string;
  queries: string[];
  connections?: number;
  seconds?: number;
}

/** One unmeasured warm-up pass, then `rounds` measured passes, one query at a time. */
export async function measure(queries: string[], run: (query: string) => Promise<unknown>, rounds = ROUNDS): Promise<Distribution> {
  for (const query of queries) await run(query);
  const latencies: number[] = [];
  const started = performance.now();
  for (let round = 0; round < rounds; round++) {
    for (const query of queries) {
      const before = performance.now();
      await run(query);
      latencies.push(performance.now() - before);
    }
  }
  const elapsed = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const percentile = (share: number) => latencies[Math.min(latencies.length - 1, Math.ceil(share * latencies.length) - 1)] ?? Number.NaN;
  return {
    count: latencies.length,
    mean: latencies.reduce((sum, latency) => sum + latency, 0) / latencies.length,
    p50: percentile(0.5),
    p95: percentile(0.95),
    p99: percentile(0.99),
    max: latencies.at(-1) ?? Number.NaN,
    perSecond: latencies.length / (elapsed / 1000),
  };
}

/**
 * POST /search from autocannon in its own process (this module, run directly), so that the client's
 * work does not run on the event loop of the caller, which may be the server itself.
 */
export function runAutocannon(input: LoadInput): Promise<autocannon.Result> {
  const resolved: Required<LoadInput> = { connections: HTTP_CONNECTIONS, seconds: HTTP_SECONDS, ...input };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
      cwd: repositoryRoot,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (part: Buffer) => (stdout += part.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`autocannon child exited ${code}`));
      resolve(JSON.parse(stdout) as autocannon.Result);
    });
    child.stdin.end(JSON.stringify(resolved));
  });
}

/** The child: POST /search for `seconds` at `connections` connections, no pipelining, cycling through the queries. */
async function loadChild(): Promise<void> {
  const { default: run } = await import('autocannon');
  let input = '';
  for await (const part of process.stdin) input += String(part);
  const { url, queries, connections, seconds } = JSON.parse(input) as Required<LoadInput>;
  let next = 0;
  const result = await run({
    url,
    connections,
    duration: seconds,
    pipelining: 1,
    requests: [
      {
        method: 'POST',
        path: '/search',
        headers: { 'content-type': 'application/json' },
        setupRequest: (request) => ({ ...request, body: JSON.stringify({ query: queries[next++ % queries.length] }) }),
      },
    ],
  });
  process.stdout.write(JSON.stringify(result));
}

function isRunDirectly(): boolean {
  const script = process.argv[1];
  return script !== undefined && import.meta.url === pathToFileURL(script).href;
}

if (isRunDirectly()) {
  loadChild().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
