import { createReadStream, existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { EvalBackend } from './backend.ts';
import { mean, ndcgAtK, recallAtK, type Qrels } from './metrics.ts';

/**
 * A BEIR dataset (https://github.com/beir-cellar/beir): corpus.jsonl ({_id, title, text}),
 * queries.jsonl ({_id, text}), qrels/test.tsv (query-id, corpus-id, score with a header line).
 */
export interface BeirDocument {
  source: string;
  markdown: string;
}

export function beirFiles(dir: string) {
  return { corpus: join(dir, 'corpus.jsonl'), queries: join(dir, 'queries.jsonl'), qrels: join(dir, 'qrels', 'test.tsv') };
}

export function assertBeirDir(dir: string): void {
  const missing = Object.values(beirFiles(dir)).filter((file) => !existsSync(file));
  if (missing.length > 0) throw new Error(`Not a BEIR dataset folder, missing: ${missing.join(', ')}`);
}

export async function* jsonLines(file: string): AsyncGenerator<Record<string, unknown>> {
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) if (line.trim() !== '') yield JSON.parse(line) as Record<string, unknown>;
}

/** Each corpus entry as one Markdown document: the title as `#` heading, then the text; source = doc id. */
export async function* beirDocuments(dir: string): AsyncGenerator<BeirDocument> {
  for await (const entry of jsonLines(beirFiles(dir).corpus)) {
    const title = String(entry['title'] ?? '').trim();
    const text = String(entry['text'] ?? '').trim();
    yield { source: String(entry['_id']), markdown: title ? `# ${title}\n\n${text}\n` : `${text}\n` };
  }
}

export async function readQrels(file: string): Promise<Map<string, Qrels>> {
  const qrels = new Map<string, Qrels>();
  const rows = (await readFile(file, 'utf8')).split(/\r?\n/).filter((line) => line.trim() !== '');
  for (const [index, row] of rows.entries()) {
    const [queryId, docId, grade] = row.split('\t');
    if (index === 0 && Number.isNaN(Number(grade))) continue; // header
    if (queryId === undefined || docId === undefined || grade === undefined) throw new Error(`${file}:${index + 1}: expected query-id, corpus-id, score`);
    const judged = qrels.get(queryId) ?? new Map<string, number>();
    judged.set(docId, Number(grade));
    qrels.set(queryId, judged);
  }
  return qrels;
}

export async function readQueries(file: string, wanted: Set<string>): Promise<Map<string, string>> {
  const queries = new Map<string, string>();
  for await (const entry of jsonLines(file)) {
    const id = String(entry['_id']);
    if (wanted.has(id)) queries.set(id, String(entry['text'] ?? ''));
  }
  return queries;
}

export interface BeirResult {
  dataset: string;
  backend: string;
  documents: number;
  chunks: number;
  queries: number;
  ndcgAt10: number;
  recallAt100: number;
  /** Per query, for the JSON report. */
  perQuery: Array<{ id: string; ndcgAt10: number; recallAt100: number }>;
}

/** Chunks read per query: a document may have several chunks, and Recall@100 needs 100 distinct documents. */
export const BEIR_CHUNK_DEPTH = 300;

/** Ranks documents by their best chunk (first occurrence in the chunk ranking). */
export function documentRanking(sources: string[]): string[] {
  return [...new Set(sources)];
}

export async function runBeirQueries(
  dataset: string,
  backend: EvalBackend,
  queries: Map<string, string>,
  qrels: Map<string, Qrels>,
  indexed: { documents: number; chunks: number },
): Promise<BeirResult> {
  const perQuery: BeirResult['perQuery'] = [];
  for (const [id, judged] of qrels) {
    const text = queries.get(id);
    if (text === undefined) throw new Error(`qrels name query ${id}, which queries.jsonl does not have`);
    const ranked = documentRanking((await backend.search(text, BEIR_CHUNK_DEPTH)).map((passage) => passage.source));
    perQuery.push({ id, ndcgAt10: ndcgAtK(ranked, judged, 10), recallAt100: recallAtK(ranked, judged, 100) });
  }
  return {
    dataset,
    backend: backend.description,
    ...indexed,
    queries: perQuery.length,
    ndcgAt10: mean(perQuery.map((entry) => entry.ndcgAt10)),
    recallAt100: mean(perQuery.map((entry) => entry.recallAt100)),
    perQuery,
  };
}
