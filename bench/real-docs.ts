/**
 * Real published manuals through the compiled ingest job, in one run: Debian's PostgreSQL, Python, Django and
 * Linux kernel HTML manuals (bench/debian-manuals.ts downloads and unpacks them), each alone and the four
 * together, against the argo-cd Markdown docs (×1 and ×22) measured the same way, and the three largest pages
 * of the manuals on their own (python contents.html and genindex-all.html, the kernel's process/maintainers.html).
 * Each run is `node dist/ingest/cli.js <folder>` in its own process with a fresh RAG_DATA_DIR, the embedded
 * default (LanceDB, BM25 only), `pnpm build` first unless `--no-build`. `--before DIR` runs the same rows with the
 * bundles of another checkout (built there) for a before/after in the same run (`--before-rows` the rows of
 * it, all by default); `--rows a,b` picks rows.
 *
 *   pnpm exec tsx bench/real-docs.ts [--write] [--no-build] [--before DIR [--before-rows a,b]] [--rows argo-cd,postgresql,...]
 */
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildAll } from '../scripts/build.ts';
import { debianManual, HTML_MANUALS, manualVersion } from './debian-manuals.ts';
import { INGEST_BUNDLE, runIngestProcess, type IngestProcessRun } from './ingest-process.ts';
import { writeResultsSection } from './results-file.ts';

const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));
const ARGO_CD = join(repositoryRoot, '../shared/corpora/argo-cd-docs');
const SECTION = '## Real documents: Debian manuals';
const LARGEST_PAGES = ['python/contents.html', 'python/genindex-all.html', 'kernel/process/maintainers.html'];

interface Row {
  name: string;
  /** What the row's folder holds, built under `work` on first use. */
  folder: (work: string) => Promise<string>;
  env?: Record<string, string>;
}

interface Measured {
  row: Row;
  pages: number;
  megabytes: number;
  run: IngestProcessRun;
}

const ROWS: Row[] = [
  { name: 'argo-cd', folder: async (work) => copyOf(ARGO_CD, join(work, 'argo-cd')) },
  { name: 'argo-cd-x22', folder: async (work) => copies(ARGO_CD, join(work, 'argo-cd-x22'), 22) },
  ...HTML_MANUALS.map((name) => ({ name, folder: () => debianManual(name) })),
  { name: 'four-manuals', folder: async (work) => fourManuals(join(work, 'four-manuals')) },
  { name: 'largest-pages', folder: async (work) => largestPages(join(work, 'largest-pages')) },
  { name: 'largest-pages-full', folder: async (work) => largestPages(join(work, 'largest-pages')), env: { INGEST_LINK_PAGES: 'full' } },
];

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { write: { type: 'boolean', default: false }, 'no-build': { type: 'boolean', default: false }, before: { type: 'string' }, rows: { type: 'string' }, 'before-rows': { type: 'string' } },
  });
  if (!existsSync(ARGO_CD)) throw new Error(`${ARGO_CD} is absent (it comes with ../shared/corpora)`);
  const wanted = values.rows?.split(',') ?? ROWS.map((row) => row.name);
  const rows = ROWS.filter((row) => wanted.includes(row.name));
  if (!values['no-build']) await buildAll();
  const work = await mkdtemp(join(tmpdir(), 'rag-bench-real-docs-'));
  try {
    const after = await measureAll(rows, work, repositoryRoot);
    const beforeRows = values['before-rows'] ? rows.filter((row) => values['before-rows']!.split(',').includes(row.name)) : rows;
    const before = values.before ? await measureAll(beforeRows, work, values.before) : undefined;
    const section = await report(after, before, values.before);
    console.log(section);
    if (values.write) await writeResultsSection(SECTION, section);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function measureAll(rows: Row[], work: string, checkout: string): Promise<Measured[]> {
  if (!existsSync(join(checkout, INGEST_BUNDLE))) throw new Error(`${join(checkout, INGEST_BUNDLE)} is absent: build that checkout first`);
  const measured: Measured[] = [];
  for (const row of rows) {
    const folder = await row.folder(work);
    const dataDir = await mkdtemp(join(tmpdir(), 'rag-bench-real-docs-data-'));
    try {
      const run = await runIngestProcess(folder, dataDir, { cwd: checkout, env: row.env });
      const { pages, bytes } = pagesOf(folder);
      measured.push({ row, pages, megabytes: bytes / 1e6, run });
      console.error(`${basename(checkout)} ${row.name}: ${run.summary} in ${run.syncSeconds.toFixed(1)} s, peak ${run.peakRssMiB.toFixed(0)} MiB ${run.notes.join('; ')}`);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  return measured;
}

/** Hard links, not copies: the folders are read, never written (a symbolic link would not be followed). */
function linkTree(source: string, target: string): string {
  execFileSync('cp', ['-al', source, target]);
  return target;
}

async function copyOf(source: string, target: string): Promise<string> {
  if (!existsSync(target)) linkTree(source, target);
  return target;
}

async function copies(source: string, target: string, count: number): Promise<string> {
  if (existsSync(target)) return target;
  await mkdir(target, { recursive: true });
  for (let copy = 1; copy <= count; copy += 1) linkTree(source, join(target, `copy-${String(copy).padStart(2, '0')}`));
  return target;
}

async function fourManuals(target: string): Promise<string> {
  if (existsSync(target)) return target;
  await mkdir(target, { recursive: true });
  for (const name of HTML_MANUALS) linkTree(await debianManual(name), join(target, name));
  return target;
}

async function largestPages(target: string): Promise<string> {
  if (existsSync(target)) return target;
  for (const page of LARGEST_PAGES) {
    const [manual, ...rest] = page.split('/');
    await mkdir(join(target, manual!, ...rest.slice(0, -1)), { recursive: true });
    execFileSync('cp', ['-l', join(await debianManual(manual!), ...rest), join(target, page)]);
  }
  return target;
}

function pagesOf(folder: string): { pages: number; bytes: number } {
  let pages = 0;
  let bytes = 0;
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      // Debian's packages link shared files (jquery.js) into the manual: links are not pages, and the job skips them too.
      const stat = lstatSync(path);
      if (stat.isDirectory()) walk(path);
      else if (/\.(html?|md|markdown)$/i.test(name)) {
        pages += 1;
        bytes += stat.size;
      }
    }
  };
  walk(folder);
  return { pages, bytes };
}

const chunksPerSecond = (measured: Measured) => measured.run.chunks / measured.run.syncSeconds;

function tableRow(measured: Measured): string {
  const { row, pages, megabytes, run } = measured;
  const errors = run.errors > 0 ? ` (${run.errors} errors)` : '';
  return `| ${row.name}${row.env ? ` (${Object.entries(row.env).map(([key, value]) => `${key}=${value}`).join(' ')})` : ''} | ${pages.toLocaleString('en-US')} | ${megabytes.toFixed(1)} | ${run.chunks.toLocaleString('en-US')}${errors} | ${run.syncSeconds.toFixed(1)} s | ${chunksPerSecond(measured).toFixed(0)} | ${run.peakRssMiB.toFixed(0)} MiB |`;
}

function table(rows: Measured[]): string {
  return ['| corpus | pages | MB | chunks | ingest | chunks/s | peak RSS |', '| --- | --- | --- | --- | --- | --- | --- |', ...rows.map(tableRow)].join('\n');
}

function targets(rows: Measured[]): string[] {
  const named = (name: string) => rows.find((measured) => measured.row.name === name);
  const lines: string[] = [];
  const four = named('four-manuals');
  const x22 = named('argo-cd-x22');
  const one = named('argo-cd');
  if (four && x22) {
    const ratio = chunksPerSecond(four) / chunksPerSecond(x22);
    lines.push(`- Four manuals at ${chunksPerSecond(four).toFixed(0)} chunks/s, ${ratio.toFixed(2)} × argo-cd ×22's ${chunksPerSecond(x22).toFixed(0)} (target ≥ 0.5: ${ratio >= 0.5 ? 'met' : 'missed'}); peak RSS ${four.run.peakRssMiB.toFixed(0)} MiB (target ≤ 800: ${four.run.peakRssMiB <= 800 ? 'met' : 'missed'}).`);
  }
  for (const name of ['largest-pages', 'largest-pages-full']) {
    const largest = named(name);
    if (!largest || !one) continue;
    const ratio = largest.run.syncSeconds / one.run.syncSeconds;
    lines.push(`- The three largest pages (${largest.megabytes.toFixed(1)} MB${largest.row.env ? `, ${Object.entries(largest.row.env).map(([key, value]) => `${key}=${value}`).join(' ')}` : ''}): ${largest.run.syncSeconds.toFixed(1)} s, ${ratio.toFixed(2)} × argo-cd ×1's ${one.run.syncSeconds.toFixed(1)} s (target ≤ 2: ${ratio <= 2 ? 'met' : 'missed'}), ${largest.run.chunks.toLocaleString('en-US')} chunks, ${largest.run.errors} refused or failed.`);
  }
  return lines;
}

async function report(after: Measured[], before: Measured[] | undefined, beforeCheckout: string | undefined): Promise<string> {
  const versions = await Promise.all(HTML_MANUALS.map(async (name) => `${name}: \`${await manualVersion(name).catch(() => 'not unpacked')}\``));
  const linkLists = after.map((measured) => measured.run.notes.map((note) => `${measured.row.name}: ${note}`)).flat();
  return `${SECTION}

\`pnpm exec tsx bench/real-docs.ts --write${beforeCheckout ? ' --before <checkout>' : ''}\`: each corpus ingested by the compiled job (\`node ${INGEST_BUNDLE} <folder>\`) in its own process into a fresh data folder, the embedded default (LanceDB, BM25 only), defaults otherwise (CHUNK_SIZE 1200, INGEST_CONCURRENCY 4, conversion in ${cpus().length} worker threads, INGEST_LINK_PAGES=light). Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} CPU cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.version}, on a machine shared with other work (each run under the shared lock of heavy jobs). "ingest" is the sync as the job logs it (\`ingest finished\`), start-up and compaction excluded; pages and MB count the HTML and Markdown files; peak RSS is GNU time's maximum resident set size of the job, its worker threads included. Manuals: ${versions.join(', ')} (Debian 12), unpacked by \`bench/debian-manuals.ts\`; argo-cd is \`../shared/corpora/argo-cd-docs\`, ×22 its 22 copies side by side.

${table(after)}
${before ? `\nThe same rows with the job before this change (\`${beforeCheckout}\`, node-html-markdown on the job's thread), in the same run:\n\n${table(before)}\n` : ''}
${targets(after).join('\n')}

Link lists seen: ${linkLists.length > 0 ? linkLists.join('; ') : 'none'}.
`;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
