import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createLogger, readInstructions, loadConfig, PUBLIC_ONLY, type Chunk } from '@rag/core';
import { EmbeddedIndex } from './embedded-index.ts';
import { loadSets } from './levers.ts';
import { passageInstructionsMarkdown, type AttackSetCount, type CorpusCount } from './passage-instructions-report.ts';
import { readNotes, writeReport } from './report.ts';

const USAGE = `Usage: pnpm eval:instructions [--corpus NAME=FOLDER ...] [--attacks NAME=FILE ...] [--report-dir eval/reports]
Chunks every golden set's corpus (and each --corpus folder) as ingestion does and counts the passages
/chat would withhold as written to the model (packages/core/src/chat/passage-instructions.ts): on published
manuals each is a false alarm. Each --attacks file (BIPIA's text_attack_*.json: {category: [attack, …]}) and
the poisoned corpus's documents measure what it catches. Writes <report-dir>/passage-instructions.md and .json.`;

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const GOLDEN_SETS = ['project-docs', 'django-docs', 'sqlite-docs', 'vllm-gke', 'nimbus-faq', 'cjk-tech', 'seed-article-fr'].map((name) => `eval/golden/${name}.yaml`);
const POISONED = { name: 'poisoned', root: 'eval/corpora/poisoned' };
const EXAMPLES_PER_CORPUS = 5;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      corpus: { type: 'string', multiple: true, default: [] },
      attacks: { type: 'string', multiple: true, default: [] },
      'report-dir': { type: 'string', default: 'eval/reports' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return void process.stdout.write(`${USAGE}\n`);
  const config = { ...loadConfig(), EMBED_MODEL: undefined, EMBED_URL: undefined, RERANK_URL: undefined, RERANK_MODEL: undefined };
  const sets = await loadSets(GOLDEN_SETS, repositoryRoot);
  const folders = [...sets.map((set) => ({ name: set.name, root: set.corpus!.root, include: set.corpus!.include })), ...values.corpus.map(namedPath).map(({ name, path }) => ({ name, root: path, include: undefined }))];
  const corpora: CorpusCount[] = [];
  for (const folder of folders) {
    process.stderr.write(`instructions: chunking ${folder.name}…\n`);
    corpora.push(countCorpus(folder.name, await chunksOf(config, folder)));
  }
  const poisonedChunks = await chunksOf(config, { ...POISONED, root: join(repositoryRoot, POISONED.root), include: undefined });
  const attacks: AttackSetCount[] = [poisonedCount(poisonedChunks)];
  for (const { name, path } of values.attacks.map(namedPath)) attacks.push(...attackCounts(name, JSON.parse(await readFile(path, 'utf8')) as Record<string, string[]>));
  const report = join(values['report-dir'], 'passage-instructions.md');
  const written = await writeReport(report, passageInstructionsMarkdown(corpora, attacks, await readNotes(report)), { corpora, attacks });
  process.stdout.write(`Wrote ${written.markdown} and ${written.json}\n`);
}

function namedPath(value: string): { name: string; path: string } {
  const at = value.indexOf('=');
  if (at < 1) throw new Error(`expected NAME=PATH, got ${value}`);
  return { name: value.slice(0, at), path: value.slice(at + 1) };
}

/** Every chunk of a folder, cut exactly as `pnpm ingest` cuts it. */
async function chunksOf(config: ReturnType<typeof loadConfig>, folder: { name: string; root: string; include: string[] | undefined }): Promise<Chunk[]> {
  if (!existsSync(folder.root)) throw new Error(`${folder.name}: ${folder.root} does not exist`);
  const index = await EmbeddedIndex.open(config, createLogger('error'));
  try {
    await index.ingestFolder({ root: folder.root, ...(folder.include ? { include: folder.include } : {}) } as Parameters<EmbeddedIndex['ingestFolder']>[0]);
    const documents = await index.store.listDocuments();
    return await index.store.getChunks(documents.flatMap((document) => document.chunkIds), PUBLIC_ONLY);
  } finally {
    await index.close();
  }
}

function countCorpus(name: string, chunks: readonly Chunk[]): CorpusCount {
  const flagged = chunks.map((chunk) => ({ chunk, ...readInstructions(chunk.text) })).filter((reading) => reading.addressesTheModel);
  const signalCounts: Record<string, number> = {};
  for (const chunk of chunks) for (const signal of readInstructions(chunk.text).signals) signalCounts[signal] = (signalCounts[signal] ?? 0) + 1;
  return {
    name,
    chunks: chunks.length,
    flagged: flagged.length,
    signalCounts,
    examples: flagged.slice(0, EXAMPLES_PER_CORPUS).map(({ chunk, signals }) => ({ label: `${chunk.source}#${chunk.chunkIndex}`, signals })),
  };
}

/** The poisoned corpus: its handbook pages are honest, every other document carries an attack. */
function poisonedCount(chunks: readonly Chunk[]): AttackSetCount {
  const attacks = chunks.filter((chunk) => !chunk.source.startsWith('handbook/'));
  const honest = chunks.filter((chunk) => chunk.source.startsWith('handbook/'));
  const caught = attacks.filter((chunk) => readInstructions(chunk.text).addressesTheModel);
  return { set: 'eval/corpora/poisoned', category: 'poisoned documents (honest handbook pages beside them)', attacks: attacks.length, caught: caught.length, honestFlagged: honest.filter((chunk) => readInstructions(chunk.text).addressesTheModel).length, honest: honest.length };
}

function attackCounts(set: string, categories: Record<string, string[]>): AttackSetCount[] {
  return Object.entries(categories).map(([category, texts]) => ({ set, category, attacks: texts.length, caught: texts.filter((text) => readInstructions(text).addressesTheModel).length }));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
  process.exitCode = 1;
});
