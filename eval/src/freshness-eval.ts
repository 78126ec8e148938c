/**
 * The freshness measurement (pnpm eval:freshness): eval/golden/freshness.yaml's corpus is copied to a temporary
 * folder with each page's modified time set from the golden file, indexed as `pnpm ingest` would (the environment's
 * embedder, if any: EMBED_MODEL for hybrid), and every question is searched with and without recency boosts. For
 * questions whose fact exists in two versions it reports hit@1 and MRR of the newer page and how often the outdated
 * one comes first; for facts in one old page, whether a boost pushed a recent page above it.
 *
 *   pnpm eval:freshness [eval/golden/freshness.yaml] [--report eval/reports/freshness.md]
 */
import { cp, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readFile } from 'node:fs/promises';
import { createLogger, loadConfig, PUBLIC_ONLY, Retriever, Telemetry, toFreshnessBoost, type FreshnessBoost } from '@rag/core';
import { parse } from 'yaml';
import { z } from 'zod';
import { EmbeddedIndex } from './embedded-index.ts';
import { firstHitRank, rankMetrics, sourceMatches } from './metrics.ts';

const setSchema = z
  .object({
    corpus: z.string().min(1),
    modified: z.record(z.string(), z.number().min(0)),
    questions: z.array(z.object({ question: z.string().min(1), expected_source: z.string().min(1), stale_source: z.string().min(1).optional() }).strict()).min(1),
  })
  .strict();
type FreshnessSet = z.infer<typeof setSchema>;

const K = 5;
const DAY_MS = 86_400_000;
/** Off, the documented default, and a stronger weight. */
const SETTINGS: Array<{ name: string; freshness: { half_life_days: number; weight: number } | undefined }> = [
  { name: 'no boost', freshness: undefined },
  { name: 'half-life 30 d, weight 0.1 (default)', freshness: { half_life_days: 30, weight: 0.1 } },
  { name: 'half-life 90 d, weight 0.1', freshness: { half_life_days: 90, weight: 0.1 } },
  { name: 'half-life 30 d, weight 0.2', freshness: { half_life_days: 30, weight: 0.2 } },
  { name: 'half-life 30 d, weight 0.3', freshness: { half_life_days: 30, weight: 0.3 } },
  { name: 'half-life 180 d, weight 0.3', freshness: { half_life_days: 180, weight: 0.3 } },
  { name: 'half-life 180 d, weight 0.5', freshness: { half_life_days: 180, weight: 0.5 } },
  { name: 'half-life 365 d, weight 1', freshness: { half_life_days: 365, weight: 1 } },
];

interface Row {
  setting: string;
  twoVersions: { hitAt1: number; mrr: number; staleFirst: number; questions: number };
  oneVersion: { hitAt1: number; questions: number };
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { report: { type: 'string' } } });
  const file = positionals[0] ?? 'eval/golden/freshness.yaml';
  const set = setSchema.parse(parse(await readFile(file, 'utf8')));
  const config = loadConfig(undefined, { LOG_LEVEL: 'warn' });
  const logger = createLogger(config.LOG_LEVEL, { format: config.LOG_FORMAT });
  const folder = await mkdtemp(join(tmpdir(), 'rag-freshness-corpus-'));
  const now = Date.now();
  const index = await EmbeddedIndex.open(config, logger);
  try {
    await copyWithAges(set, folder, now);
    await index.ingestFolder({ root: folder, include: undefined });
    const retriever = new Retriever({ store: index.store, embedder: index.embedder, rerankCandidates: config.RERANK_CANDIDATES, telemetry: new Telemetry() });
    const rows: Row[] = [];
    for (const setting of SETTINGS) rows.push(await measure(set, retriever, setting.name, setting.freshness && toFreshnessBoost(setting.freshness, now)));
    const report = render(index.description, rows);
    process.stdout.write(report);
    if (values.report) {
      await writeFile(values.report, report);
      await writeFile(values.report.replace(/\.md$/, '.json'), `${JSON.stringify({ backend: index.description, k: K, rows }, null, 2)}\n`);
    }
  } finally {
    await index.close();
    await rm(folder, { recursive: true, force: true });
  }
}

async function copyWithAges(set: FreshnessSet, folder: string, now: number): Promise<void> {
  await cp(resolve(set.corpus), folder, { recursive: true });
  for (const [name, days] of Object.entries(set.modified)) {
    const time = new Date(now - days * DAY_MS);
    await utimes(join(folder, name), time, time);
  }
}

async function measure(set: FreshnessSet, retriever: Retriever, setting: string, freshness: FreshnessBoost | undefined): Promise<Row> {
  const newerRanks: Array<number | undefined> = [];
  const oneVersionRanks: Array<number | undefined> = [];
  let staleFirst = 0;
  for (const question of set.questions) {
    const hits = await retriever.search(question.question, K, PUBLIC_ONLY, undefined, { freshness });
    const rank = firstHitRank(hits, { expectedSource: question.expected_source });
    if (question.stale_source === undefined) {
      oneVersionRanks.push(rank);
      continue;
    }
    newerRanks.push(rank);
    if (hits[0] && sourceMatches(hits[0].source, question.stale_source)) staleFirst += 1;
  }
  const newer = rankMetrics(newerRanks);
  return {
    setting,
    twoVersions: { hitAt1: newer.hitAt1, mrr: newer.mrr, staleFirst: staleFirst / newerRanks.length, questions: newerRanks.length },
    oneVersion: { hitAt1: rankMetrics(oneVersionRanks).hitAt1, questions: oneVersionRanks.length },
  };
}

function render(backend: string, rows: Row[]): string {
  const lines = [
    '# Freshness: the newer of two versions of a fact',
    '',
    `Backend: ${backend}. Top ${K}; generated by \`pnpm eval:freshness\` (eval/golden/freshness.yaml).`,
    '',
    `| setting | newer version hit@1 | newer version MRR | outdated version first | one-version facts hit@1 |`,
    '| --- | --- | --- | --- | --- |',
    ...rows.map(
      (row) =>
        `| ${row.setting} | ${row.twoVersions.hitAt1.toFixed(2)} | ${row.twoVersions.mrr.toFixed(3)} | ${row.twoVersions.staleFirst.toFixed(2)} | ${row.oneVersion.hitAt1.toFixed(2)} |`,
    ),
    '',
    `${rows[0]?.twoVersions.questions ?? 0} questions with two versions, ${rows[0]?.oneVersion.questions ?? 0} with one old version still valid.`,
    '',
  ];
  return lines.join('\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
