import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createLogger, loadConfig } from '@rag/core';
import { loadSets, runCell, type LeverCell, type Rung } from './levers.ts';
import { leversMarkdown } from './levers-report.ts';
import { readNotes, writeReport } from './report.ts';

const USAGE = `Usage: pnpm eval:levers [--questions eval/golden/<set>.yaml ...] [--rung NAME ...] [--report-dir eval/reports] [--name levers]
       pnpm eval:levers --render [--report-dir eval/reports] [--name levers]
Runs every rung (or the named ones) on every set and writes <report-dir>/<name>.md and .json; the rungs that need a
dense model read it from .cache/models (pnpm models:fetch). --render rewrites the Markdown from the JSON (after
editing <name>.notes.md).`;

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const MINILM = '.cache/models/all-minilm-l6-v2';
const STATIC = '.cache/models/minilm-l6-static';

/** The rungs, cheapest first. Model rungs name the folder pnpm models:fetch builds. */
export const RUNGS: Rung[] = [
  { name: 'seed chunks, BM25', description: "the seed's chunk boundaries (CHUNK_MIN_CHARS=0), BM25 over `<source> > <heading path>` and the text", settings: { CHUNK_MIN_CHARS: 0 } },
  { name: 'merged <200, BM25', description: 'pieces under 200 characters merged into a neighbour (CHUNK_MIN_CHARS=200)', settings: { CHUNK_MIN_CHARS: 200 } },
  { name: 'merged <400, BM25 (default)', description: 'pieces under 400 characters merged (CHUNK_MIN_CHARS=400, the default)', settings: { CHUNK_MIN_CHARS: 400 } },
  { name: 'merged <600, BM25', description: 'pieces under 600 characters merged (CHUNK_MIN_CHARS=600)', settings: { CHUNK_MIN_CHARS: 600 } },
  { name: 'seed chunks, hybrid MiniLM', description: 'all-MiniLM-L6-v2 dense leg fused with BM25 by RRF (k 2), seed boundaries', settings: { CHUNK_MIN_CHARS: 0, EMBED_MODEL: MINILM } },
  { name: 'merged <400, hybrid MiniLM', description: 'the same over merged pieces', settings: { CHUNK_MIN_CHARS: 400, EMBED_MODEL: MINILM } },
  { name: 'merged <400, hybrid static', description: 'a Model2Vec static distillation of MiniLM (256 dimensions) as the dense leg', settings: { CHUNK_MIN_CHARS: 400, EMBED_MODEL: STATIC } },
];

const DEFAULT_SETS = ['eval/golden/project-docs.yaml', 'eval/golden/django-docs.yaml', 'eval/golden/vllm-gke.yaml'];

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      questions: { type: 'string', multiple: true },
      rung: { type: 'string', multiple: true },
      'report-dir': { type: 'string', default: 'eval/reports' },
      name: { type: 'string', default: 'levers' },
      render: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return void process.stdout.write(`${USAGE}\n`);
  const report = join(values['report-dir'], `${values.name}.md`);
  const json = report.replace(/\.md$/, '.json');
  if (values.render) {
    const saved = JSON.parse(await readFile(json, 'utf8')) as { rungs: Rung[]; cells: LeverCell[] };
    await writeReport(report, leversMarkdown(saved.rungs, saved.cells, await readNotes(report)), saved);
    return;
  }
  const rungs = values.rung ? RUNGS.filter((rung) => values.rung!.includes(rung.name)) : RUNGS;
  if (rungs.length === 0) throw new Error(`no rung is named ${values.rung!.join(', ')}; rungs: ${RUNGS.map((rung) => rung.name).join('; ')}`);
  for (const rung of rungs) {
    const model = rung.settings.EMBED_MODEL;
    if (model && !existsSync(join(repositoryRoot, model))) throw new Error(`rung "${rung.name}" needs ${model}: run pnpm models:fetch`);
  }
  const config = loadConfig();
  const logger = createLogger('error');
  const sets = await loadSets(values.questions ?? DEFAULT_SETS, repositoryRoot);
  const cells: LeverCell[] = [];
  for (const rung of rungs) {
    for (const set of sets) {
      process.stderr.write(`levers: ${rung.name} on ${set.name}…\n`);
      const cell = await runCell({ ...rung, settings: withModelPath(rung.settings) }, set, config, logger);
      cells.push(cell);
      process.stderr.write(`  hit@1 ${cell.result.inScope.hitAt1.toFixed(3)} hit@5 ${cell.result.inScope.hitAt5.toFixed(3)} MRR ${cell.result.inScope.mrr.toFixed(3)}\n`);
    }
  }
  const all = await withEarlierCells(json, cells);
  const written = await writeReport(report, leversMarkdown(RUNGS.filter((rung) => all.some((cell) => cell.rung === rung.name)), all, await readNotes(report)), { rungs: RUNGS, cells: all });
  process.stdout.write(`Wrote ${written.markdown} and ${written.json}\n`);
}

/** A run of some rungs or sets keeps the saved cells it did not measure again. */
async function withEarlierCells(json: string, cells: LeverCell[]): Promise<LeverCell[]> {
  if (!existsSync(json)) return cells;
  const saved = (JSON.parse(await readFile(json, 'utf8')) as { cells: LeverCell[] }).cells;
  const measured = new Set(cells.map((cell) => `${cell.rung}\u0000${cell.set}`));
  return [...saved.filter((cell) => !measured.has(`${cell.rung}\u0000${cell.set}`)), ...cells];
}

function withModelPath(settings: Rung['settings']): Rung['settings'] {
  return settings.EMBED_MODEL ? { ...settings, EMBED_MODEL: join(repositoryRoot, settings.EMBED_MODEL) } : settings;
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
  process.exitCode = 1;
});
