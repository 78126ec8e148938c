import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { claimStems, contentStems, createEmbedder, createLogger, loadConfig, sentenceSupport, SUPPORT_THRESHOLD, type Embedder } from '@rag/core';
import type { EvalPassage } from './backend.ts';
import { EmbeddedIndex } from './embedded-index.ts';
import { loadSets } from './levers.ts';
import { readNotes, writeReport } from './report.ts';
import { agreementAt, loadSupportSample, separation, type Agreement, type ScoredSentence, type SupportSample } from './support-agreement.ts';

const USAGE = `Usage: pnpm eval:support [--sample eval/golden/support-sample.yaml] [--report eval/reports/answers/support-agreement.md]
Scores every labelled sentence of the sample with the answer check's lexical rule and with all-MiniLM-L6-v2's cosine
(pnpm models:fetch) against the passages its question retrieves (BM25, as /chat without a dense model), and reports how
each agrees with the labels.`;

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const MINILM = join(repositoryRoot, '.cache/models/all-minilm-l6-v2');
const DENSE_THRESHOLDS = [0.3, 0.35, 0.4, 0.45, 0.5];

interface SentenceScores {
  question: number;
  claim: string;
  supported: boolean;
  from: string;
  /** The answer check's support: the best share of the claim's stems (less the question's) one passage holds. */
  lexical: number;
  /** The best cosine between the sentence and a passage. */
  dense: number;
}

function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  a.forEach((value, index) => {
    dot += value * b[index]!;
    normA += value * value;
    normB += b[index]! * b[index]!;
  });
  return dot / Math.sqrt(normA * normB);
}

function lexicalSupport(claim: string, question: string, passages: readonly EvalPassage[]): number {
  const stems = claimStems(claim, contentStems(question));
  // No checkable claim: the answer check lets the sentence through.
  if (stems === undefined) return 1;
  return Math.max(0, ...passages.map((passage) => sentenceSupport(stems, contentStems(passage.text))));
}

async function scoreSample(sample: SupportSample, index: EmbeddedIndex, embedder: Embedder): Promise<SentenceScores[]> {
  const [set] = await loadSets([sample.set], repositoryRoot);
  await index.ingestFolder(set!.corpus!);
  const retrieved = new Map<number, { question: string; passages: EvalPassage[]; vectors: number[][] }>();
  const scores: SentenceScores[] = [];
  for (const sentence of sample.sentences) {
    let context = retrieved.get(sentence.question);
    if (!context) {
      const question = set!.questions.find((candidate) => candidate.number === sentence.question)?.question;
      if (question === undefined) throw new Error(`${sample.set} has no question ${sentence.question}`);
      const passages = await index.search(question, sample.passages);
      context = { question, passages, vectors: await embedder.embedDocuments(passages.map((passage) => passage.text)) };
      retrieved.set(sentence.question, context);
    }
    const [vector] = await embedder.embedDocuments([sentence.claim]);
    const dense = Math.max(-1, ...context.vectors.map((passage) => cosine(vector!, passage)));
    scores.push({ ...sentence, lexical: lexicalSupport(sentence.claim, context.question, context.passages), dense });
  }
  return scores;
}

const percent = (count: number, of: number) => `${count} / ${of} (${of === 0 ? 'n/a' : `${Math.round((100 * count) / of)} %`})`;

function agreementRow(measure: string, agreement: Agreement): string {
  return `| ${measure} | ${percent(agreement.supportedKept, agreement.supported)} | ${percent(agreement.unsupportedFlagged, agreement.unsupported)} | ${agreement.balancedAccuracy.toFixed(3)} |`;
}

function rows(scores: readonly SentenceScores[]): string[] {
  const as = (score: (sentence: SentenceScores) => number): ScoredSentence[] => scores.map((sentence) => ({ supported: sentence.supported, score: score(sentence) }));
  const lexical = as((sentence) => sentence.lexical);
  const dense = as((sentence) => sentence.dense);
  return [
    agreementRow(`lexical ≥ ${SUPPORT_THRESHOLD} (the answer check)`, agreementAt(lexical, SUPPORT_THRESHOLD)),
    ...DENSE_THRESHOLDS.map((threshold) => agreementRow(`MiniLM cosine ≥ ${threshold}`, agreementAt(dense, threshold))),
    ...DENSE_THRESHOLDS.map((threshold) =>
      agreementRow(`both: lexical ≥ ${SUPPORT_THRESHOLD} and cosine ≥ ${threshold}`, agreementAt(as((sentence) => Number(sentence.lexical >= SUPPORT_THRESHOLD && sentence.dense >= threshold)), 1)),
    ),
  ];
}

function markdown(sample: SupportSample, scores: readonly SentenceScores[], notes: string | undefined): string {
  const supported = scores.filter((sentence) => sentence.supported).length;
  const scored = (key: 'lexical' | 'dense') => scores.map((sentence) => ({ supported: sentence.supported, score: sentence[key] }));
  const origins = [...new Set(scores.map((sentence) => sentence.from))];
  return [
    '# Sentence support: each measure against a careful reading',
    '',
    `Sample \`eval/golden/support-sample.yaml\`: ${scores.length} sentences written by the 1.5B model over \`${sample.set}\`, ${supported} supported and ${scores.length - supported} not by a careful reading of the ${sample.passages} passages BM25 retrieves for each question. A measure keeps a sentence when its best passage scores at or above the threshold; the answer check shows a kept sentence unmarked.`,
    '',
    `Separation whatever the threshold (AUROC, supported above unsupported): lexical ${separation(scored('lexical'))!.toFixed(3)}, MiniLM cosine ${separation(scored('dense'))!.toFixed(3)}.`,
    '',
    '| measure | supported kept | unsupported flagged | balanced accuracy |',
    '| --- | --- | --- | --- |',
    ...rows(scores),
    '',
    '## By where the sentences come from',
    '',
    '| answers (a sentence counted where it first appears) | sentences | supported by the reading | kept by the lexical check |',
    '| --- | --- | --- | --- |',
    ...origins.map((origin) => {
      const group = scores.filter((sentence) => sentence.from === origin);
      return `| ${origin} | ${group.length} | ${group.filter((sentence) => sentence.supported).length} | ${group.filter((sentence) => sentence.lexical >= SUPPORT_THRESHOLD).length} |`;
    }),
    '',
    '## Unsupported sentences the answer check keeps',
    '',
    '| question | sentence | lexical | cosine |',
    '| --- | --- | --- | --- |',
    ...scores.filter((sentence) => !sentence.supported && sentence.lexical >= SUPPORT_THRESHOLD).map((sentence) => `| ${sentence.question} | ${sentence.claim.replaceAll('|', '\\|')} | ${sentence.lexical.toFixed(2)} | ${sentence.dense.toFixed(2)} |`),
    ...(notes ? ['', notes.trim()] : []),
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sample: { type: 'string', default: 'eval/golden/support-sample.yaml' },
      report: { type: 'string', default: 'eval/reports/answers/support-agreement.md' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return void process.stdout.write(`${USAGE}\n`);
  if (!existsSync(MINILM)) throw new Error(`${MINILM} is missing: run pnpm models:fetch`);
  const sample = await loadSupportSample(values.sample);
  const config = loadConfig();
  const logger = createLogger('error');
  const embedder = await createEmbedder({ ...config, EMBED_MODEL: MINILM }, logger);
  if (!embedder) throw new Error('all-MiniLM-L6-v2 did not load');
  const index = await EmbeddedIndex.open(config, logger);
  try {
    const scores = await scoreSample(sample, index, embedder);
    const written = await writeReport(values.report, markdown(sample, scores, await readNotes(values.report)), { sample: values.sample, sentences: scores });
    process.stdout.write(`Wrote ${written.markdown} and ${written.json}\n`);
  } finally {
    await index.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
  process.exitCode = 1;
});
