import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createInterface } from 'node:readline';
import { assertBeirDir, beirFiles, readQrels } from './beir.ts';

/**
 * A smaller BEIR corpus for a model too slow to embed the whole one on a CPU (nomic-embed-text-v1.5 on
 * llama.cpp reads about one SciFact abstract a second on two cores, so 5,183 take hours): every document
 * a test query judges, then distractors until the corpus has --documents entries. The distractors are the
 * documents whose SHA-256 of the id is smallest: a fixed sample anyone can rebuild, chosen by no model.
 * Scores on it are higher than on the whole corpus (fewer distractors); compare rungs on the same subset.
 */

const USAGE = 'usage: tsx eval/src/beir-subset.ts <beir dir> --documents N --out <dir>';

async function corpusLines(file: string): Promise<Array<{ id: string; line: string }>> {
  const entries: Array<{ id: string; line: string }> = [];
  for await (const line of createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity })) {
    if (line.trim() !== '') entries.push({ id: String((JSON.parse(line) as { _id: unknown })._id), line });
  }
  return entries;
}

function idHash(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

export async function writeBeirSubset(source: string, documents: number, out: string): Promise<{ judged: number; distractors: number }> {
  assertBeirDir(source);
  const files = beirFiles(source);
  const judged = new Set([...(await readQrels(files.qrels)).values()].flatMap((grades) => [...grades.keys()]));
  const corpus = await corpusLines(files.corpus);
  const distractors = corpus
    .filter((entry) => !judged.has(entry.id))
    .sort((a, b) => (idHash(a.id) < idHash(b.id) ? -1 : 1))
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

if (import.meta.url === `file://${process.argv[1]}`) await main();
