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
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMemoryCgroup } from '../../ingest/test/memory-cgroup.ts';
import { inflatingPdf } from '../../packages/core/test/ingest/inflating-pdf.ts';
import { runIngestProcess } from '../ingest-process.ts';
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

/** The documents the job reported failed, from its JSON log: file name and error code. */
function failedDocuments(log: string): Array<{ uri: string; code: string }> {
  return log
    .split('\n')
    .filter((line) => line.includes('"document failed"'))
    .map((line) => JSON.parse(line) as { uri: string; code: string })
    .map(({ uri, code }) => ({ uri: uri.slice(uri.lastIndexOf('/') + 1), code }));
}

const cgroup = createMemoryCgroup('rag-probe', LIMIT_BYTES);
if ('unavailable' in cgroup) throw new Error(`the probe needs a memory cgroup: ${cgroup.unavailable}`);
const folder = await probeFolder();
const dataDir = mkdtempSync(join(tmpdir(), 'rag-cgroup-probe-data-'));
try {
  // runIngestProcess throws, with the job's log, when the job ends other than 0 or 1 (killed by the kernel too).
  const run = await runIngestProcess(folder, dataDir, { env: CRONJOB_ENV, cgroup }).catch((error: Error) => {
    throw new Error(`${error.message}\n(processes OOM-killed in the cgroup: ${cgroup.oomKills()})`);
  });
  const failed = failedDocuments(run.stderr);
  const peakMiB = cgroup.peakBytes() / MIB;
  const oomKills = cgroup.oomKills();
  console.log(JSON.stringify({ summary: run.summary, failed, peakMiB, oomKills, wallSeconds: run.wallSeconds }, null, 2));
  const section = [
    '## Conversion memory under a 2 GiB cgroup (the audit\'s probes at the CronJob\'s settings)',
    '',
    `\`pnpm build && tsx bench/probes/cgroup-memory.ts\`, ${new Date().toISOString().slice(0, 10)}, Node ${process.versions.node}, cgroup v${cgroup.version}, 2 cores. The compiled job in a memory cgroup of 2 GiB (the CronJob's \`limits.memory\`, no swap) at the CronJob's settings (${Object.entries(CRONJOB_ENV).map(([key, value]) => `${key}=${value}`).join(', ')}), over a folder holding the audit's PDF (1.8 MB, its page stream inflating to 1.8 GB), two 44 MB HTML pages, two dense 14 MB pages (under the 14.7 MB cap, so parsed) and the project's docs. The cgroup's peak counts page cache too.`,
    '',
    '| exit | summary | documents failed (code) | peak of the cgroup | processes OOM-killed | wall |',
    '| --- | --- | --- | --- | --- | --- |',
    `| ${run.errors > 0 ? 1 : 0} | \`${run.summary}\` | ${failed.map(({ uri, code }) => `${uri} (${code})`).join(', ') || 'none'} | ${peakMiB.toFixed(0)} MiB of 2048 | ${oomKills} | ${run.wallSeconds.toFixed(1)} s |`,
    '',
    'Before the bounds (the audit, on main then): the PDF alone took `pnpm ingest` to 4.0 GB resident and was indexed; the two 44 MB pages at these settings peaked at 2.6 GB, past the limit, so the pod would have been OOM-killed at every run.',
    '',
  ].join('\n');
  await writeResultsSection('## Conversion memory under a 2 GiB cgroup', section);
  if (oomKills !== 0 || run.errors === 0) process.exitCode = 1;
} finally {
  cgroup.remove();
  rmSync(folder, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
}
