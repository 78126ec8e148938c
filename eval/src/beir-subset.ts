import { createHash } from 'node:crypto';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { assertBeirDir, beirFiles, jsonLines, readQrels } from './beir.ts';

/**
 * A smaller BEIR corpus for a model too slow to embed the whole one on a CPU (nomic-embed-text-v1.5 on
 * llama.cpp reads about one SciFact abstract a second on two cores, so 5,183 take hours): every document
 * a test query judges, then distractors until the corpus has --documents entries. The distractors are the
 * documents whose SHA-256 of the id is smallest: a fixed sample anyone can rebuild, chosen by no model.
 * Scores on it are higher than on the whole corpus (fewer distractors); compare rungs on the same subset.
 */

const USAGE = 'usage: tsx eval/src/beir-subset.ts <beir dir> --documents N --out <dir>';

interface CorpusEntry {
  id: string;
  line: string;
  /** SHA-256 of the id: the order distractors are taken in. */
  hash: string;
}

async function readCorpus(file: string): Promise<CorpusEntry[]> {
  const entries: CorpusEntry[] = [];
  for await (const entry of jsonLines(file)) {
    const id = String(entry['_id']);
    entries.push({ id, line: JSON.stringify(entry), hash: createHash('sha256').update(id).digest('hex') });
  }
  return entries;
}

export async function writeBeirSubset(source: string, documents: number, out: string): Promise<{ judged: number; distractors: number }> {
  assertBeirDir(source);
  const files = beirFiles(source);
  const judged = new Set([...(await readQrels(files.qrels)).values()].flatMap((grades) => [...grades.keys()]));
  const corpus = await readCorpus(files.corpus);
  const distractors = corpus
    .filter((entry) => !judged.has(entry.id))
    .sort((a, b) => (a.hash < b.hash ? -1 : 1))
    .slice(0, Math.max(0, documents - judged.size));
  const kept = new Set([...judged, ...distractors.map((entry) => entry.id)]);
  const target = beirFiles(out);
  await mkdir(join(out, 'qrels'), { recursive: true });
  // The corpus keeps its own order, so an index built from the subset sees documents as the full one does.
  await writeFile(target.corpus, corpus.filter((entry) => kept.has(entry.id)).map((entry) => `${entry.line}\n`).join(''));
  await copyFile(files.queries, target.queries);
  await copyFile(files.qrels, target.qrels);
  return { judged: judged.size, distractors: distractors.length };
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ options: { documents: { type: 'string' }, out: { type: 'string' } }, allowPositionals: true });
  const documents = Number(values.documents);
  if (positionals.length !== 1 || !values.out || !Number.isInteger(documents) || documents < 1) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const { judged, distractors } = await writeBeirSubset(positionals[0]!, documents, values.out);
  process.stdout.write(`${values.out}: ${judged} judged documents and ${distractors} distractors\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
