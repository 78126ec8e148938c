/**
 * The audit's memory probes (issue 43, finding 3) run as the CronJob runs: the compiled job (`node
 * dist/ingest/cli.js`) at the CronJob's memory settings (k8s/rag/ingest/cronjob.yaml), inside a real memory
 * cgroup of 2 GiB, its `limits.memory`. The folder holds the PDF whose 1.8 MB page stream inflates to 1.8 GB, two
 * 44 MB HTML pages, two dense pages just under the CronJob's HTML cap (they are parsed), and the project's docs.
 * The job must end on its own, every probe failing alone and every other document indexed, with no process killed
 * by the kernel. Needs root and a writable cgroup file system (ingest/test/memory-cgroup.ts).
 *
 *   pnpm build && tsx bench/probes/cgroup-memory.ts     # writes its section of bench/results.md
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMemoryCgroup, inCgroup, type MemoryCgroup } from '../../ingest/test/memory-cgroup.ts';
import { inflatingPdf } from '../../packages/core/test/ingest/inflating-pdf.ts';
import { embeddedEnv, INGEST_BUNDLE } from '../ingest-process.ts';
import { writeResultsSection } from '../results-file.ts';

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const LIMIT_BYTES = 2 * 1024 ** 3;
const MIB = 1024 * 1024;
/** The CronJob's settings (k8s/rag/ingest/cronjob.yaml), k8s/test/ingest-memory.test.ts holds them to its limit. */
const CRONJOB_ENV = {
  INGEST_CONCURRENCY: '2',
  INGEST_CONVERT_WORKERS: '2',
  INGEST_CONVERT_MEMORY_MB: '448',
  INGEST_CONVERT_BUFFERS_MB: '192',
  INGEST_MAIN_MEMORY_MB: '512',
  MALLOC_ARENA_MAX: '2',
};

/** A dense page of table rows, `megabytes` long: text in every cell, as a data-heavy reference page. */
function denseTablePage(megabytes: number): string {
  const row = (n: number) => `<tr><td>param_${n}</td><td>integer</td><td>Sets the replica count of pool ${n} when the scheduler rebalances shards across zones.</td></tr>\n`;
  const rows: string[] = [];
  let size = 0;
  for (let n = 0; size < megabytes * 1e6; n += 1) {
    const line = row(n);
    rows.push(line);
    size += line.length;
  }
  return `<html><head><title>Parameters</title></head><body><main><h1>Parameters</h1><table>${rows.join('')}</table></main></body></html>`;
}

async function probeFolder(): Promise<string> {
  const folder = mkdtempSync(join(tmpdir(), 'rag-cgroup-probe-'));
  writeFileSync(join(folder, 'inflating.pdf'), await inflatingPdf(1800));
  writeFileSync(join(folder, 'huge-1.html'), denseTablePage(44));
  writeFileSync(join(folder, 'huge-2.html'), denseTablePage(44));
  writeFileSync(join(folder, 'dense-1.html'), denseTablePage(14));
  writeFileSync(join(folder, 'dense-2.html'), denseTablePage(14));
  cpSync(join(repositoryRoot, 'docs'), join(folder, 'docs'), { recursive: true });
  return folder;
}

interface ProbeRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  summary: string;
  failed: Array<{ uri: string; code: string }>;
  seconds: number;
  peakMiB: number;
  oomKills: number;
}

async function runInCgroup(cgroup: MemoryCgroup, folder: string, dataDir: string): Promise<ProbeRun> {
  const [command, args] = inCgroup(cgroup, process.execPath, [INGEST_BUNDLE, folder]);
  const started = performance.now();
  const child = spawn(command, args, { cwd: repositoryRoot, env: embeddedEnv(dataDir, CRONJOB_ENV), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (part: Buffer) => (stdout += part.toString()));
  child.stderr.on('data', (part: Buffer) => (stderr += part.toString()));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
  });
  const failed = `${stdout}\n${stderr}`
    .split('\n')
    .filter((line) => line.includes('"document failed"'))
    .map((line) => JSON.parse(line) as { uri: string; code: string })
    .map(({ uri, code: errorCode }) => ({ uri: uri.slice(uri.lastIndexOf('/') + 1), code: errorCode }));
  return {
    code,
    signal,
    summary: stdout.trimEnd().split('\n').at(-1) ?? '',
    failed,
    seconds: (performance.now() - started) / 1000,
    peakMiB: cgroup.peakBytes() / MIB,
    oomKills: cgroup.oomKills(),
  };
}

const cgroup = createMemoryCgroup('rag-probe', LIMIT_BYTES);
if ('unavailable' in cgroup) throw new Error(`the probe needs a memory cgroup: ${cgroup.unavailable}`);
const folder = await probeFolder();
const dataDir = mkdtempSync(join(tmpdir(), 'rag-cgroup-probe-data-'));
try {
  const run = await runInCgroup(cgroup, folder, dataDir);
  console.log(JSON.stringify(run, null, 2));
  const section = [
    '## Conversion memory under a 2 GiB cgroup (the audit\'s probes at the CronJob\'s settings)',
    '',
    `\`pnpm build && tsx bench/probes/cgroup-memory.ts\`, ${new Date().toISOString().slice(0, 10)}, Node ${process.versions.node}, cgroup v${cgroup.version}, 2 cores. The compiled job in a memory cgroup of 2 GiB (the CronJob's \`limits.memory\`, no swap) at the CronJob's settings (${Object.entries(CRONJOB_ENV).map(([key, value]) => `${key}=${value}`).join(', ')}), over a folder holding the audit's PDF (1.8 MB, its page stream inflating to 1.8 GB), two 44 MB HTML pages, two dense 14 MB pages (under the 14.7 MB cap, so parsed) and the project's docs. The cgroup's peak counts page cache too.`,
    '',
    '| exit | summary | documents failed (code) | peak of the cgroup | processes OOM-killed | wall |',
    '| --- | --- | --- | --- | --- | --- |',
    `| ${run.code ?? run.signal} | \`${run.summary}\` | ${run.failed.map(({ uri, code }) => `${uri} (${code})`).join(', ') || 'none'} | ${run.peakMiB.toFixed(0)} MiB of 2048 | ${run.oomKills} | ${run.seconds.toFixed(1)} s |`,
    '',
    'Before the bounds (the audit, on main then): the PDF alone took `pnpm ingest` to 4.0 GB resident and was indexed; the two 44 MB pages at these settings peaked at 2.6 GB, past the limit, so the pod would have been OOM-killed at every run.',
    '',
  ].join('\n');
  await writeResultsSection('## Conversion memory under a 2 GiB cgroup', section);
  if (run.code !== 1 || run.oomKills !== 0) process.exitCode = 1;
} finally {
  cgroup.remove();
  rmSync(folder, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
}
