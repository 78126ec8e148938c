/**
 * R's PDF manuals (texinfo, with full outlines; Debian's r-doc-pdf, unpacked by bench/debian-manuals.ts)
 * through the embedded PDF converter and the chunker, as the ingest's document preparation runs them, one
 * manual at a time: pages, chunks, conversion time, chunks/s, the share of chunks whose heading path ends in
 * one of the manual's outline titles (read with pdf.js apart from the converter), and sample heading paths.
 * `--root DIR` takes the converter and chunker of another checkout (`git worktree add --detach DIR main`,
 * `pnpm install --offline` there) for a before/after: `--before DIR` runs that in a child process and puts
 * both in the report. `--write` replaces the "PDF manuals (R, texinfo)" section of bench/results.md.
 * Nothing here is needed by `pnpm test` or `.ci/run`.
 *
 *   pnpm exec tsx bench/pdf-manuals.ts [--write] [--before DIR] [--root DIR] [--json]
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { debianManual, manualVersion } from './debian-manuals.ts';
import { writeResultsSection } from './results-file.ts';

const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));
const SECTION = '## PDF manuals (R, texinfo)';
const CHUNKING = { chunkSize: 1200, chunkOverlap: 200 };
const SAMPLE_MANUAL = 'R-admin.pdf';
const SAMPLES = 5;

interface ManualFigures {
  name: string;
  pages: number;
  chunks: number;
  convertSeconds: number;
  chunkSeconds: number;
  /** Chunks whose heading path's deepest part is an outline title. */
  outlineTitled: number;
  samples: string[];
}

interface Pipeline {
  convert: (bytes: Buffer, name: string) => Promise<{ markdown: string; pages?: { page: number }[] | undefined; structure?: unknown }>;
  chunk: (document: unknown, name: string) => { headingPath: string }[];
}

async function pipelineOf(root: string): Promise<Pipeline> {
  const core = (path: string): string => pathToFileURL(join(root, 'packages/core/src', path)).href;
  const { PdfConverter } = (await import(core('converters/pdf.ts'))) as { PdfConverter: new () => { toPagedMarkdown: Pipeline['convert'] } };
  const { chunkDocument } = (await import(core('chunking/chunk-markdown.ts'))) as { chunkDocument: (d: unknown, s: string, o: typeof CHUNKING) => { headingPath: string }[] };
  const converter = new PdfConverter();
  return { convert: (bytes, name) => converter.toPagedMarkdown(bytes, name), chunk: (document, name) => chunkDocument(document, name, CHUNKING) };
}

/** pdf.js (through unpdf) as this checkout's core package has it: the workspace root does not depend on it. */
const { getDocumentProxy } = (await import(pathToFileURL(createRequire(join(repositoryRoot, 'packages/core/package.json')).resolve('unpdf')).href)) as {
  getDocumentProxy: (data: Uint8Array, options: { verbosity: number }) => Promise<PdfJsDocument>;
};

/** What this reads of pdf.js's PDFDocumentProxy. */
interface PdfJsDocument {
  numPages: number;
  getOutline(): Promise<OutlineItem[] | null>;
  destroy(): Promise<void>;
}

interface OutlineItem {
  title: string;
  items: OutlineItem[];
}

/** Every title of the PDF's outline, nested ones included (pdf.js getOutline: `title`, `items`). */
async function outlineTitles(bytes: Buffer): Promise<{ titles: Set<string>; pages: number }> {
  const document = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
  try {
    const titles = new Set<string>();
    const visit = (items: readonly OutlineItem[]): void => {
      for (const item of items) {
        titles.add(item.title.replace(/\s+/g, ' ').trim());
        visit(item.items);
      }
    };
    visit((await document.getOutline()) ?? []);
    return { titles, pages: document.numPages };
  } finally {
    await document.destroy();
  }
}

/**
 * The manuals' PDFs, each once: refman.pdf is fullrefman.pdf again in the package (the same size; 58 bytes of
 * its document ID and dates differ), so files of a size already seen are left out.
 */
function manualFiles(folder: string): string[] {
  const sizes = new Set<number>();
  return readdirSync(folder)
    .filter((file) => file.endsWith('.pdf'))
    .sort()
    .filter((file) => {
      const { size } = statSync(join(folder, file));
      if (sizes.has(size)) return false;
      sizes.add(size);
      return true;
    });
}

async function measure(root: string): Promise<ManualFigures[]> {
  const folder = await debianManual('r-manuals');
  const pipeline = await pipelineOf(root);
  const figures: ManualFigures[] = [];
  for (const name of manualFiles(folder)) {
    const bytes = await readFile(join(folder, name));
    const { titles, pages } = await outlineTitles(bytes);
    const convertStart = cpuSeconds();
    const document = await pipeline.convert(bytes, name);
    const chunkStart = cpuSeconds();
    const chunks = pipeline.chunk(document, name);
    const end = cpuSeconds();
    const outlineTitled = chunks.filter((chunk) => titles.has(chunk.headingPath.split(' > ').at(-1) ?? '')).length;
    const step = Math.max(1, Math.floor(chunks.length / SAMPLES));
    const samples = name === SAMPLE_MANUAL ? chunks.filter((_, index) => index % step === step - 1).slice(0, SAMPLES).map((chunk) => `${name} > ${chunk.headingPath}`) : [];
    figures.push({ name, pages, chunks: chunks.length, convertSeconds: chunkStart - convertStart, chunkSeconds: end - chunkStart, outlineTitled, samples });
    process.stderr.write(`${name}: ${pages} pages, ${chunks.length} chunks, ${(end - convertStart).toFixed(1)} s\n`);
  }
  return figures;
}

/**
 * The process's CPU time (user and system): pdf.js runs on this thread in Node (its worker is faked), so this is
 * the conversion's work, whatever else runs on the shared machine meanwhile.
 */
function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

function total(figures: ManualFigures[]): ManualFigures {
  const sum = (pick: (figure: ManualFigures) => number): number => figures.reduce((all, figure) => all + pick(figure), 0);
  return {
    name: 'all',
    pages: sum((f) => f.pages),
    chunks: sum((f) => f.chunks),
    convertSeconds: sum((f) => f.convertSeconds),
    chunkSeconds: sum((f) => f.chunkSeconds),
    outlineTitled: sum((f) => f.outlineTitled),
    samples: figures.flatMap((f) => f.samples),
  };
}

function row(label: string, figure: ManualFigures): string {
  const seconds = figure.convertSeconds + figure.chunkSeconds;
  const share = figure.chunks === 0 ? 0 : (100 * figure.outlineTitled) / figure.chunks;
  return `| ${label} | ${figure.pages.toLocaleString('en')} | ${figure.chunks.toLocaleString('en')} | ${figure.convertSeconds.toFixed(1)} s | ${Math.round(figure.chunks / seconds).toLocaleString('en')} | ${share.toFixed(0)} % |`;
}

async function report(after: ManualFigures[], before: ManualFigures[] | undefined): Promise<string> {
  const lines = [
    SECTION,
    '',
    `R's manuals from Debian's \`${await manualVersion('r-manuals')}\` (${after.map((f) => f.name).join(', ')}), each converted by the embedded`,
    'PDF converter and chunked (1200/200) in one process, one manual at a time, on the shared 2-core machine; times are',
    'the process\'s CPU seconds (conversion: pdf.js and the converter; chunks/s over conversion and chunking), not wall time.',
    '"outline-titled": chunks whose heading path ends in one of the manual\'s outline titles (read with pdf.js apart',
    'from the converter). Reproduce: `pnpm exec tsx bench/pdf-manuals.ts --write --before <checkout of main>`.',
    '',
    '| converter | pages | chunks | conversion | chunks/s | outline-titled |',
    '| --- | --- | --- | --- | --- | --- |',
    ...(before ? [row('before (one block per page)', total(before))] : []),
    row('after (outline, font sizes)', total(after)),
    '',
    '| manual | pages | chunks | conversion | chunks/s | outline-titled |',
    '| --- | --- | --- | --- | --- | --- |',
    ...after.map((figure) => row(figure.name, figure)),
    '',
  ];
  const samples = (label: string, figures: ManualFigures[]): string[] => [`${label}:`, '', ...total(figures).samples.map((path) => `- \`${path}\``), ''];
  if (before) lines.push(...samples(`Sample heading paths of ${SAMPLE_MANUAL}, before`, before));
  lines.push(...samples(`Sample heading paths of ${SAMPLE_MANUAL}, after`, after));
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { write: { type: 'boolean', default: false }, before: { type: 'string' }, root: { type: 'string' }, json: { type: 'boolean', default: false } } });
  const after = await measure(values.root ?? repositoryRoot);
  if (values.json) {
    process.stdout.write(JSON.stringify(after));
    return;
  }
  const before = values.before
    ? (JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--root', values.before, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 })) as ManualFigures[])
    : undefined;
  const section = await report(after, before);
  process.stdout.write(section);
  if (values.write) await writeResultsSection(SECTION, section);
}

await main();
