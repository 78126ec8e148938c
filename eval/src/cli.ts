import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { createChatModel, createLogger, isRagError, loadConfig, type ChatModel, type Config, type Logger } from '@rag/core';
import { startLlamaServer, type RunningServer } from '../../scripts/llm/llama-server.ts';
import { CachedChatModel } from './cached-chat-model.ts';
import { evaluateAnswers, type AnswerEvaluation } from './answers.ts';
import type { EvalBackend } from './backend.ts';
import { assertBeirDir, beirDocuments, beirFiles, readQrels, readQueries, runBeirQueries } from './beir.ts';
import { beirMarkdown } from './beir-report.ts';
import { EmbeddedIndex } from './embedded-index.ts';
import { GoldenSetError, loadGoldenSet, type GoldenSet } from './golden-set.ts';
import { HttpBackend } from './http-backend.ts';
import { ladderMarkdown, tuningMarkdown } from './ladder-report.ts';
import { runLadder, type LadderEntry, type LadderTarget } from './ladder.ts';
import { goldenMarkdown, readNotes, writeReport } from './report.ts';
import { beirTask, goldenTask } from './retrieval-task.ts';
import { runGoldenSet, type Gate } from './runner.ts';

const USAGE = `Usage:
  pnpm eval --questions eval/golden/<set>.yaml [--questions ...] [--url http://127.0.0.1:8090]
            [--report eval/reports/<name>.md | --report-dir eval/reports] [--min-hit5 0.9] [--min-mrr 0.75]
            [--min-score X] [--answers [--no-judge] [--serve <model> [--threads N]] [--answer-cache DIR|none]]
  pnpm eval --beir <dir> [--report eval/reports/<name>.md]
  pnpm eval --ladder [--questions <set>.yaml ...] [--beir <dir> ...] --model <dense model> [--model ...] [--report-dir eval/reports]

--questions   a golden set (YAML); repeat for several. Without --url the set's \`corpus:\` is ingested
              into a temporary index and searched in process, with the adapters the environment configures.
--url         evaluate a running service through POST /search (and /chat with --answers) instead
--report      write the report as Markdown and JSON beside it (one set); --report-dir: <dir>/<set>.md each
--min-hit5, --min-mrr   the gate (defaults 0.9 and 0.75): exit 1 when a set falls below it
--min-score   a RAG_MIN_SCORE to evaluate (default: RAG_MIN_SCORE of the environment)
--answers     also evaluate /chat answers: citation precision and recall, unsupported sentences, declines, key facts;
              a set's \`answer_gate:\` gates them; with GATEWAY_URL or --serve the model answers and judges faithfulness
              (advisory), without them the extractive answers are checked
--no-judge    skip the judge (on a CPU model each verdict costs as much as an answer)
--serve       start llama-server for a model of pnpm models:fetch (pnpm llm:serve's names) and use it as the gateway;
              --threads N (default 2)
--answers-only key-facts   answer only the questions with key_facts, and the out-of-scope ones
--answer-cache  where completions are kept between runs (default .cache/answers; none: always ask the model)
--beir        run a BEIR dataset (corpus.jsonl, queries.jsonl, qrels/test.tsv) in process: nDCG@10, Recall@100
--ladder, --tune-fusion
              for each set and each --model (an EMBED_MODEL): BM25, dense only, hybrid RRF, and hybrid with RRF
              parameters tuned on the other half of the questions; writes <report-dir>/ladder.md and
              <report-dir>/fusion-tuning.md (the chosen parameters and their gain on held-out questions);
              --ladder-render --report-dir <dir> rewrites both from <dir>/ladder.json (after editing their notes)
Golden sets gate on \`gate:\`, or on \`hybrid_gate:\` when a dense model is configured (EMBED_MODEL or EMBED_URL).`;

/** The repository root: golden sets name their corpus relative to it. */
export const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

class UsageError extends Error {}

export const DEFAULT_GATE: Gate = { minHit5: 0.9, minMrr: 0.75 };

function parseFraction(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0 || number > 1) throw new UsageError(`${name} must be a number between 0 and 1, got "${value}"`);
  return number;
}

function parseScore(value: string | undefined, fallback: number | undefined): number | undefined {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0) throw new UsageError(`--min-score must be a number ≥ 0, got "${value}"`);
  return number;
}

/** The set's own language, unless BM25_LANGUAGE is given: a set is measured with another analyzer that way. */
function configFor(set: GoldenSet, config: Config): Config {
  return set.bm25Language && process.env.BM25_LANGUAGE === undefined ? { ...config, BM25_LANGUAGE: set.bm25Language } : config;
}

async function backendFor(set: GoldenSet, url: string | undefined, config: Config, logger: Logger, chatModel?: ChatModel): Promise<EvalBackend> {
  if (url) return new HttpBackend(url);
  if (!set.corpus) throw new UsageError(`${set.file} names no corpus: add a top-level \`corpus:\` (see README, Evaluation) or pass --url`);
  const index = await EmbeddedIndex.open(configFor(set, config), logger, { chatModel });
  try {
    await index.ingestFolder(set.corpus);
  } catch (error) {
    await index.close();
    throw error;
  }
  return index;
}

/**
 * Command-line thresholds win over the set's own gate, which wins over the seed's defaults. With a dense
 * model the set's `hybrid_gate` applies (its `gate` is BM25's): a hybrid run that falls to BM25's level fails.
 */
function gateFor(set: GoldenSet, cliGate: Partial<Gate>, hybrid: boolean): Gate {
  const own = hybrid ? set.hybridGate : set.gate;
  return {
    minHit5: cliGate.minHit5 ?? own?.minHit5 ?? DEFAULT_GATE.minHit5,
    minMrr: cliGate.minMrr ?? own?.minMrr ?? DEFAULT_GATE.minMrr,
  };
}

interface AnswerOptions {
  judge: boolean;
  cacheDir: string | undefined;
  only: 'key-facts' | undefined;
}

/**
 * The gateway's model, its completions cached on disk unless --answer-cache none; undefined without a gateway,
 * where /chat answers extractively and its answers are checked the same way (no judge).
 */
async function answeringModel(config: Config, options: AnswerOptions): Promise<ChatModel | undefined> {
  const model = createChatModel(config);
  if (!model) return undefined;
  return options.cacheDir ? CachedChatModel.open(model, options.cacheDir) : model;
}

async function evaluateSet(file: string, options: { url: string | undefined; report: string | undefined; gate: Partial<Gate>; minScore: number | undefined; answers: AnswerOptions | undefined }, config: Config, logger: Logger): Promise<boolean> {
  const set = await loadGoldenSet(resolve(file), repositoryRoot);
  set.file = file;
  const chatModel = options.answers ? await answeringModel(config, options.answers) : undefined;
  const backend = await backendFor(set, options.url, config, logger, chatModel);
  try {
    const hybrid = Boolean(config.EMBED_MODEL || config.EMBED_URL);
    const result = await runGoldenSet(set, backend, gateFor(set, options.gate, hybrid), options.minScore, hybrid ? set.hybridGate?.why : set.gate?.why);
    let answers: AnswerEvaluation | undefined;
    if (options.answers) {
      const answeredBy = chatModel ? `${config.GATEWAY_URL} (${config.GATEWAY_MODEL})` : 'no language model (extractive)';
      answers = await evaluateAnswers(set, backend, options.answers.judge ? chatModel : undefined, config.TOP_K, answeredBy, { language: configFor(set, config).BM25_LANGUAGE, only: options.answers.only });
      if (chatModel instanceof CachedChatModel) process.stderr.write(`answers: ${chatModel.counts.asked} completions asked, ${chatModel.counts.cached} from the cache\n`);
    }
    const notes = options.report ? await readNotes(options.report) : undefined;
    const markdown = goldenMarkdown(result, answers, notes);
    process.stdout.write(`${markdown}\n`);
    if (options.report) {
      const written = await writeReport(options.report, markdown, { ...result, answers });
      process.stdout.write(`Wrote ${written.markdown} and ${written.json}\n\n`);
    }
    return result.gate.passed && (answers?.gate?.passed ?? true);
  } finally {
    await backend.close();
  }
}

async function evaluateBeir(dir: string, report: string | undefined, config: Config, logger: Logger): Promise<void> {
  assertBeirDir(dir);
  const files = beirFiles(dir);
  const qrels = await readQrels(files.qrels);
  const queries = await readQueries(files.queries, new Set(qrels.keys()));
  const index = await EmbeddedIndex.open(config, logger);
  try {
    const started = performance.now();
    let documents = 0;
    const counted = (async function* () {
      for await (const document of beirDocuments(dir)) {
        documents += 1;
        yield document;
      }
    })();
    const chunks = await index.indexDocuments(counted);
    const indexSeconds = (performance.now() - started) / 1000;
    process.stderr.write(`indexed ${documents} documents (${chunks} chunks) in ${indexSeconds.toFixed(1)} s\n`);
    const dataset = dir.replace(/\/+$/, '').replace(/^.*\//, '');
    const result = await runBeirQueries(dataset, index, queries, qrels, { documents, chunks });
    const notes = report ? await readNotes(report) : undefined;
    const markdown = beirMarkdown(result, indexSeconds, notes);
    process.stdout.write(`${markdown}\n`);
    if (report) {
      const written = await writeReport(report, markdown, { ...result, indexSeconds });
      process.stdout.write(`Wrote ${written.markdown} and ${written.json}\n`);
    }
  } finally {
    await index.close();
  }
}

/** One ladder per set and model; a BEIR corpus is read again for each model rather than held in memory. */
async function ladderTargets(questionFiles: string[], beirDirs: string[]): Promise<LadderTarget[]> {
  const targets: LadderTarget[] = [];
  for (const file of questionFiles) {
    const set = await loadGoldenSet(resolve(file), repositoryRoot);
    set.file = file;
    const corpus = set.corpus;
    if (!corpus) throw new UsageError(`${file} names no corpus: the ladder indexes it in process`);
    targets.push({ task: goldenTask(set), fill: async (index) => (await index.ingestFolder(corpus)).chunks });
  }
  for (const dir of beirDirs) {
    assertBeirDir(dir);
    const files = beirFiles(dir);
    const qrels = await readQrels(files.qrels);
    const queries = await readQueries(files.queries, new Set(qrels.keys()));
    const name = dir.replace(/\/+$/, '').replace(/^.*\//, '');
    // Whole documents, as BEIR's dense baselines embed them (truncated at the model's length): the published
    // numbers the ladder is read against are measured that way. BM25 does not care (0.681 chunked, 0.683 whole).
    const wholeDocuments = { CHUNK_SIZE: 100_000, CHUNK_OVERLAP: 0 };
    targets.push({ task: beirTask(name, queries, qrels), config: wholeDocuments, fill: (index) => index.indexDocuments(beirDocuments(dir)) });
  }
  return targets;
}

async function evaluateLadder(questionFiles: string[], beirDirs: string[], models: string[], reportDir: string | undefined, config: Config, logger: Logger): Promise<void> {
  if (models.length === 0) throw new UsageError('--ladder needs at least one --model (a dense model folder or id, as EMBED_MODEL takes)');
  const entries: LadderEntry[] = [];
  for (const target of await ladderTargets(questionFiles, beirDirs)) {
    for (const model of models) {
      process.stderr.write(`ladder: ${target.task.name} with ${model}…\n`);
      const entry = await runLadder(target, model, config, logger);
      process.stderr.write(`ladder: ${target.task.name} with ${model}: ${entry.chunks} chunks indexed in ${entry.indexSeconds.toFixed(1)} s, queries in ${entry.querySeconds.toFixed(1)} s\n`);
      entries.push(entry);
    }
  }
  await writeLadderReports(entries, reportDir);
}

/** ladder.json holds every entry whole, so `--ladder-render` can rewrite both reports (with new notes) without searching again. */
async function writeLadderReports(entries: LadderEntry[], reportDir: string | undefined): Promise<void> {
  const dir = reportDir?.replace(/\/+$/, '');
  const ladder = ladderMarkdown(entries, dir ? await readNotes(`${dir}/ladder.md`) : undefined);
  const tuning = tuningMarkdown(entries, dir ? await readNotes(`${dir}/fusion-tuning.md`) : undefined);
  process.stdout.write(`${ladder}\n${tuning}\n`);
  if (dir) {
    await writeReport(`${dir}/ladder.md`, ladder, entries);
    await writeReport(`${dir}/fusion-tuning.md`, tuning, entries.map(({ set, kind, model, tuning: outcome }) => ({ set, kind, model, ...outcome })));
    process.stdout.write(`Wrote ${dir}/ladder.md, ${dir}/fusion-tuning.md and their JSON\n`);
  }
}

function parseOptions(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      questions: { type: 'string', multiple: true },
      url: { type: 'string' },
      report: { type: 'string' },
      'report-dir': { type: 'string' },
      'min-hit5': { type: 'string' },
      'min-mrr': { type: 'string' },
      'min-score': { type: 'string' },
      answers: { type: 'boolean', default: false },
      'no-judge': { type: 'boolean', default: false },
      serve: { type: 'string' },
      threads: { type: 'string' },
      'answer-cache': { type: 'string' },
      'answers-only': { type: 'string' },
      beir: { type: 'string', multiple: true },
      ladder: { type: 'boolean', default: false },
      'tune-fusion': { type: 'boolean', default: false },
      model: { type: 'string', multiple: true },
      'ladder-render': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
}

type ParsedValues = ReturnType<typeof parseOptions>['values'];

/** --answer-cache: a folder, `none`, or the default under .cache/ (shared by the worktrees, ignored by git). */
function answerCacheDir(option: string | undefined): string | undefined {
  if (option === 'none') return undefined;
  return option ?? resolve(repositoryRoot, '.cache', 'answers');
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseOptions(argv);
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  // A report on stdout reads better without the pipeline's info lines; LOG_LEVEL still wins.
  const server = values.serve ? await serveModel(values.serve, values.threads) : undefined;
  try {
    return await run(values, loadConfig(server ? { ...process.env, GATEWAY_URL: server.url, GATEWAY_MODEL: server.name, GATEWAY_API_KEY: server.apiKey } : undefined, { LOG_LEVEL: 'warn' }));
  } finally {
    await server?.stop();
  }
}

async function serveModel(name: string, threads: string | undefined): Promise<RunningServer> {
  const count = threads === undefined ? undefined : Number(threads);
  if (count !== undefined && (!Number.isInteger(count) || count < 1)) throw new UsageError(`--threads expects a positive integer, got "${threads}"`);
  process.stderr.write(`answers: starting llama-server for ${name}…\n`);
  return startLlamaServer(name, { threads: count });
}

async function run(values: ParsedValues, config: Config): Promise<number> {
  const logger = createLogger(config.LOG_LEVEL, { format: config.LOG_FORMAT });
  if (values['ladder-render']) {
    const dir = values['report-dir'];
    if (!dir) throw new UsageError('--ladder-render rewrites <report-dir>/ladder.md and fusion-tuning.md from <report-dir>/ladder.json: give --report-dir');
    await writeLadderReports(JSON.parse(await readFile(`${dir.replace(/\/+$/, '')}/ladder.json`, 'utf8')) as LadderEntry[], dir);
    return 0;
  }
  if (values.ladder || values['tune-fusion']) {
    if (values.url) throw new UsageError('--ladder runs in process: drop --url');
    await evaluateLadder(values.questions ?? [], values.beir ?? [], values.model ?? [], values['report-dir'], config, logger);
    return 0;
  }
  if (values.beir) {
    if (values.url || values.questions) throw new UsageError('--beir runs in process on its own: drop --questions and --url');
    if (values.beir.length > 1) throw new UsageError('--beir takes one dataset (several with --ladder)');
    await evaluateBeir(values.beir[0]!, values.report, config, logger);
    return 0;
  }
  const files = values.questions ?? [];
  if (files.length === 0) throw new UsageError('give --questions <golden set> or --beir <dir>');
  if (values.report && files.length > 1) throw new UsageError('--report names one report: with several sets use --report-dir');
  const gate: Partial<Gate> = { minHit5: parseFraction(values['min-hit5'], '--min-hit5'), minMrr: parseFraction(values['min-mrr'], '--min-mrr') };
  const minScore = parseScore(values['min-score'], config.RAG_MIN_SCORE);
  let passed = true;
  for (const file of files) {
    const name = file.replace(/^.*\//, '').replace(/\.ya?ml$/, '');
    const report = values.report ?? (values['report-dir'] ? `${values['report-dir'].replace(/\/+$/, '')}/${name}.md` : undefined);
    if (values['answers-only'] !== undefined && values['answers-only'] !== 'key-facts') throw new UsageError(`--answers-only takes key-facts, got "${values['answers-only']}"`);
    const answers = values.answers ? { judge: !values['no-judge'], cacheDir: answerCacheDir(values['answer-cache']), only: values['answers-only'] as 'key-facts' | undefined } : undefined;
    const ok = await evaluateSet(file, { url: values.url, report, gate, minScore, answers }, config, logger);
    if (!ok) process.stderr.write(`Gate failed for ${file}\n`);
    passed &&= ok;
  }
  return passed ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) process.stderr.write(`${error.message}\n\n${USAGE}\n`);
    else if (error instanceof GoldenSetError) process.stderr.write(`${error.message}\n`);
    else if (isRagError(error)) process.stderr.write(`${error.code}: ${error.message}\n`);
    else process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
    process.exit(2);
  },
);
