/**
 * Chooses the grounding check's support threshold (packages/core/src/answer-check/grounding.ts) by
 * measurement, without a model: for each in-scope question of a golden set, the passages /chat would be
 * given (BM25, k 5) are checked against
 *   - supported sentences: sentences of the best passage, restated (a third of their words dropped, a quarter of
 *     the rest replaced by words of an unrelated passage), which the check must find supported;
 *   - unsupported sentences: sentences of the best passage of another question, when that passage is not
 *     among this question's, which the check must flag.
 * The threshold is tuned on the first set and measured on the others, which it never saw.
 *
 *   pnpm exec tsx eval/src/grounding-calibration.ts --tune eval/golden/project-docs.yaml --measure eval/golden/vllm-gke.yaml [--report eval/reports/grounding-threshold.md]
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { answerSentences, contentStems, createLogger, loadConfig, MIN_CLAIM_STEMS, sentenceSupport, SUPPORT_THRESHOLD, type Bm25Language } from '@rag/core';
import type { EvalPassage } from './backend.ts';
import { EmbeddedIndex } from './embedded-index.ts';
import { loadGoldenSet } from './golden-set.ts';
import { writeReport } from './report.ts';

interface Case {
  supported: boolean;
  /** Best support of the sentence among the question's passages. */
  support: number;
}

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const THRESHOLDS = Array.from({ length: 13 }, (_, index) => 0.3 + index * 0.05);
const SENTENCES_PER_PASSAGE = 3;

function bodyOf(passage: EvalPassage): string {
  const separator = passage.text.indexOf('\n\n');
  return separator === -1 ? passage.text : passage.text.slice(separator + 2);
}

function claimSentences(passage: EvalPassage, language: Bm25Language | undefined): string[] {
  return answerSentences(bodyOf(passage), () => false)
    .map(({ claim }) => claim)
    .filter((claim) => contentStems(claim, language).size >= MIN_CLAIM_STEMS + 4)
    .slice(0, SENTENCES_PER_PASSAGE);
}

/**
 * A restatement: every third word out (a model shortens) and every fourth word of what is left replaced by a
 * word of an unrelated passage (it says some of it in its own words), deterministically.
 */
function restated(sentence: string, foreign: readonly string[]): string {
  const kept = sentence.split(/\s+/).filter((_, index) => index % 3 !== 2);
  return kept.map((word, index) => (index % 4 === 3 && foreign.length > 0 ? foreign[index % foreign.length]! : word)).join(' ');
}

function bestSupport(sentence: string, passages: EvalPassage[], language: Bm25Language | undefined): number {
  const stems = contentStems(sentence, language);
  return Math.max(0, ...passages.map((passage) => sentenceSupport(stems, contentStems(passage.text, language))));
}

async function casesOf(file: string): Promise<{ name: string; cases: Case[] }> {
  const set = await loadGoldenSet(resolve(file), repositoryRoot);
  const base = loadConfig(undefined, { LOG_LEVEL: 'warn' });
  const config = set.bm25Language ? { ...base, BM25_LANGUAGE: set.bm25Language } : base;
  const index = await EmbeddedIndex.open({ ...config, EMBED_MODEL: undefined, EMBED_URL: undefined, GATEWAY_URL: undefined }, createLogger('silent'));
  try {
    await index.ingestFolder(set.corpus!);
    const inScope = set.questions.filter((question) => question.expectedSource !== undefined);
    const retrieved = await Promise.all(inScope.map((question) => index.search(question.question, 5)));
    const cases: Case[] = [];
    retrieved.forEach((passages, position) => {
      const best = passages[0];
      const other = retrieved[(position + 1) % retrieved.length]?.[0];
      if (!best) return;
      const foreign = bodyOf(retrieved[(position + 7) % retrieved.length]?.[0] ?? best).split(/\s+/).filter((word) => word.length > 3);
      for (const sentence of claimSentences(best, set.bm25Language)) cases.push({ supported: true, support: bestSupport(restated(sentence, foreign), passages, set.bm25Language) });
      const label = (passage: EvalPassage) => `${passage.source}#${passage.chunkIndex}`;
      if (!other || passages.some((passage) => label(passage) === label(other))) return;
      for (const sentence of claimSentences(other, set.bm25Language)) cases.push({ supported: false, support: bestSupport(sentence, passages, set.bm25Language) });
    });
    return { name: set.name, cases };
  } finally {
    await index.close();
  }
}

interface Score {
  threshold: number;
  supportedFlagged: number;
  unsupportedPassed: number;
  balancedAccuracy: number;
}

function score(cases: Case[], threshold: number): Score {
  const supported = cases.filter((entry) => entry.supported);
  const unsupported = cases.filter((entry) => !entry.supported);
  const supportedFlagged = supported.filter((entry) => entry.support < threshold).length / supported.length;
  const unsupportedPassed = unsupported.filter((entry) => entry.support >= threshold).length / unsupported.length;
  return { threshold, supportedFlagged, unsupportedPassed, balancedAccuracy: 1 - (supportedFlagged + unsupportedPassed) / 2 };
}

function row(name: string, cases: Case[], result: Score): string {
  const counts = `${cases.filter((entry) => entry.supported).length} / ${cases.filter((entry) => !entry.supported).length}`;
  return `| ${name} | ${counts} | ${result.threshold.toFixed(2)} | ${result.supportedFlagged.toFixed(3)} | ${result.unsupportedPassed.toFixed(3)} | ${result.balancedAccuracy.toFixed(3)} |`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { tune: { type: 'string' }, measure: { type: 'string', multiple: true }, report: { type: 'string' } } });
  if (!values.tune) throw new Error('give --tune <golden set> and --measure <golden set>…');
  const tuning = await casesOf(values.tune);
  const sweep = THRESHOLDS.map((threshold) => score(tuning.cases, threshold));
  const chosen = sweep.reduce((best, entry) => (entry.balancedAccuracy > best.balancedAccuracy + 1e-9 ? entry : best));
  const measured = await Promise.all((values.measure ?? []).map(casesOf));
  const markdown = [
    '# Grounding threshold',
    '',
    'How `SUPPORT_THRESHOLD` (packages/core/src/answer-check/grounding.ts) was chosen: `pnpm exec tsx eval/src/grounding-calibration.ts` (see its header). Supported sentences are sentences of the best passage retrieved for a golden question, restated: every third word dropped and every fourth word left replaced by a word of an unrelated passage (a model says part of it in its own words); unsupported ones are sentences of another question\'s best passage that is not among this question\'s five. A support is the share of a sentence\'s content stems (BM25 analyzer) the best of the five passages holds.',
    '',
    `Tuned on \`${tuning.name}\`: the threshold of highest balanced accuracy is **${chosen.threshold.toFixed(2)}**; the code uses **${SUPPORT_THRESHOLD}**.`,
    '',
    '| set | supported / unsupported sentences | threshold | supported flagged | unsupported passed | balanced accuracy |',
    '| --- | --- | --- | --- | --- | --- |',
    ...sweep.map((entry) => row(`${tuning.name} (tuning)`, tuning.cases, entry)),
    '',
    `Measured at ${SUPPORT_THRESHOLD} on sets the threshold was not tuned on:`,
    '',
    '| set | supported / unsupported sentences | threshold | supported flagged | unsupported passed | balanced accuracy |',
    '| --- | --- | --- | --- | --- | --- |',
    ...measured.map((set) => row(set.name, set.cases, score(set.cases, SUPPORT_THRESHOLD))),
    '',
    'What it cannot see: the check is lexical, so a sentence that copies a passage\'s words and negates them, or draws a wrong conclusion from them, passes; a faithful paraphrase in other words is flagged. The answer reports of both models (eval/reports/answers/) show how often each happens with real answers.',
    '',
  ].join('\n');
  process.stdout.write(markdown);
  if (values.report) await writeReport(values.report, markdown, { tuning: { set: tuning.name, sweep, chosen }, measured: measured.map((set) => ({ set: set.name, ...score(set.cases, SUPPORT_THRESHOLD), cases: set.cases.length })) });
}

await main();
