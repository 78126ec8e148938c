import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { AnswerEvaluation } from './answers.ts';
import type { RankMetrics } from './metrics.ts';
import type { GoldenResult, QuestionOutcome } from './runner.ts';
import { round, type RuleOutcome } from './thresholds.ts';

/**
 * Markdown for people, JSON beside it for tools. No timestamp: a report regenerated with the same
 * numbers is byte-identical, so a diff of the committed report is a change of the numbers.
 * Hand-written findings live in `<name>.notes.md` beside the report and are included verbatim.
 */

const fixed = (value: number | undefined, digits = 3) => (value === undefined ? 'n/a' : value.toFixed(digits));
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

function metricsRow(label: string, metrics: RankMetrics): string {
  return `| ${label} | ${metrics.questions} | ${fixed(metrics.hitAt1)} | ${fixed(metrics.hitAt5)} | ${fixed(metrics.mrr)} |`;
}

function topSources(outcome: QuestionOutcome): string {
  return outcome.top.map((passage) => `${passage.source} > ${passage.headingPath.split(' > ').pop() ?? ''} (${fixed(passage.score)})`).join('<br>');
}

function expected(outcome: QuestionOutcome): string {
  return `${outcome.expectedSource}${outcome.expectedSubstring ? ` ∋ "${outcome.expectedSubstring}"` : ''}`;
}

function ruleRow(rule: RuleOutcome | undefined, inScope: number, outOfScope: number): string | undefined {
  if (!rule) return undefined;
  return `| ${cell(rule.rule)} | ${rule.inScopeRefused} / ${inScope} | ${rule.outOfScopeAccepted} / ${outOfScope} |`;
}

export function goldenMarkdown(result: GoldenResult, answers: AnswerEvaluation | undefined, notes: string | undefined): string {
  const { inScope, thresholds } = result;
  const outOfScopeCount = result.outOfScopeTopScores.length;
  const notFirst = result.questions.filter((outcome) => outcome.expectedSource !== undefined && outcome.rank !== 1);
  const lines = [
    `# Evaluation: ${result.set}`,
    '',
    `Golden set \`${result.file}\`: ${inScope.questions} in-scope and ${outOfScopeCount} out-of-scope questions, retrieved through ${result.backend}; ${result.depth} passages read per question.`,
    '',
    '| | in-scope questions | hit@1 | hit@5 | MRR@10 |',
    '| --- | --- | --- | --- | --- |',
    metricsRow('all in-scope', inScope),
    ...Object.entries(result.byKind)
      .filter(() => Object.keys(result.byKind).length > 1)
      .map(([kind, metrics]) => metricsRow(kind, metrics)),
    ...(result.questions.some((outcome) => outcome.expectedSubstring !== undefined) ? [metricsRow('all in-scope, document only (substring ignored)', result.documentLevel)] : []),
    '',
    `AUROC of the top score, in-scope vs out-of-scope: **${fixed(result.auroc)}** (1 = a threshold separates them perfectly, 0.5 = chance). AUROC of the best passage's query coverage: ${fixed(thresholds.coverageAuroc)}.`,
    '',
    `Gate (hit@5 ≥ ${result.gate.minHit5}, MRR ≥ ${result.gate.minMrr}): **${result.gate.passed ? 'passed' : `FAILED: ${result.gate.failures.join(', ')}`}**.`,
    ...(result.gateWhy ? ['', `Why this gate: ${result.gateWhy}`] : []),
    '',
    `## In-scope questions not ranked first (${notFirst.length})`,
    '',
    'A hit is a passage from the expected source (path suffix) containing the expected substring, when one is given. Rank "—" means not in the top ' + result.depth + '.',
    '',
    '| # | question | expected | rank | top 3 returned (score) |',
    '| --- | --- | --- | --- | --- |',
    ...notFirst.map((outcome) => `| ${outcome.number} | ${cell(outcome.question)} | ${cell(expected(outcome))} | ${outcome.rank ?? '—'} | ${cell(topSources(outcome))} |`),
    '',
    '## Out-of-scope questions',
    '',
    '| # | question | top score | coverage of best passage |',
    '| --- | --- | --- | --- |',
    ...result.outOfScopeTopScores.map((entry) => `| ${entry.number} | ${cell(entry.question)} | ${entry.topScore === undefined ? 'no passage' : fixed(entry.topScore)} | ${fixed(entry.topCoverage, 2)} |`),
    '',
    '## Relevance threshold for /chat',
    '',
    `Top score of in-scope questions: min ${fixed(thresholds.inScopeScores?.min)}, median ${fixed(thresholds.inScopeScores?.median)}, max ${fixed(thresholds.inScopeScores?.max)}; out-of-scope: min ${fixed(thresholds.outOfScopeScores?.min)}, median ${fixed(thresholds.outOfScopeScores?.median)}, max ${fixed(thresholds.outOfScopeScores?.max)}.`,
    '',
    '| rule | in-scope wrongly refused | out-of-scope accepted |',
    '| --- | --- | --- |',
    ruleRow(thresholds.coverageRule, thresholds.inScope, thresholds.outOfScope),
    ...thresholds.coverageSweep.map((rule) => ruleRow(rule, thresholds.inScope, thresholds.outOfScope)),
    ruleRow(thresholds.configured && { ...thresholds.configured, rule: `${thresholds.configured.rule} (configured)` }, thresholds.inScope, thresholds.outOfScope),
    ruleRow(thresholds.bestScoreThreshold && { ...thresholds.bestScoreThreshold, rule: `${thresholds.bestScoreThreshold.rule} (fewest errors on this set)` }, thresholds.inScope, thresholds.outOfScope),
    ruleRow(thresholds.zeroRefusalThreshold && { ...thresholds.zeroRefusalThreshold, rule: `${thresholds.zeroRefusalThreshold.rule} (highest refusing no in-scope question)` }, thresholds.inScope, thresholds.outOfScope),
    '',
    ...(answers ? answersMarkdown(answers) : []),
    ...(notes ? ['## Findings', '', notes.trim(), ''] : []),
  ];
  const kept = lines.filter((line): line is string => line !== undefined);
  return `${kept.filter((line, index, all) => !(line === '' && all[index - 1] === '')).join('\n').trimEnd()}\n`;
}

function rate(value: number | undefined): string {
  return value === undefined ? 'n/a' : value.toFixed(3);
}

function answerGateLines(answers: AnswerEvaluation): string[] {
  const gate = answers.gate;
  if (!gate) return ['No `answer_gate:` in this set: the checks are reported only.', ''];
  return [`**Answer gate: ${gate.passed ? 'passed' : `FAILED (${gate.failures.join('; ')})`}**. ${gate.why}`, ''];
}

function flaggedLines(answers: AnswerEvaluation): string[] {
  const flagged = answers.inScope.flatMap((entry) => entry.checks.flagged.map((sentence) => `| ${entry.number} | ${sentence.status} | ${cell(sentence.text)} | ${sentence.supportedBy ?? ''} |`));
  if (flagged.length === 0) return [];
  return ['Sentences the grounding check flagged:', '', '| # | status | sentence | supported by |', '| --- | --- | --- | --- |', ...flagged, ''];
}

export function answersMarkdown(answers: AnswerEvaluation): string[] {
  const { rates } = answers;
  return [
    '## Answers',
    '',
    `Through ${answers.gateway}. Deterministic checks (eval/src/answer-checks.ts; support = a passage holds at least the grounding threshold of a sentence's content stems) may gate; the judge's faithfulness (${answers.judged > 0 || answers.judgeFailures > 0 ? 'the same gateway with the rubric of `eval/src/judge-prompt.ts`' : 'not run: --no-judge'}) is advisory.`,
    '',
    ...answerGateLines(answers),
    '| measure | value |',
    '| --- | --- |',
    `| citation precision (cited passage supports its sentence) | ${rate(rates.citationPrecision)} |`,
    `| citation recall (claim sentences whose citations support them) | ${rate(rates.citationRecall)} over ${rates.claims} sentences |`,
    `| unsupported-sentence rate | ${rate(rates.unsupportedRate)} |`,
    `| unsupported sentences shown unmarked | ${rates.unmarkedUnsupported} |`,
    `| answers not grounded (at least one unsupported sentence) | ${rates.ungroundedAnswers} / ${answers.inScope.length - answers.inScopeDeclined} |`,
    `| sentences attributed (uncited, supported) / miscited | ${rates.attributedSentences} / ${rates.miscitedSentences} |`,
    `| key facts stated (answers with all of them) | ${rate(rates.keyFactsCorrect)} over ${rates.keyFactQuestions} questions |`,
    `| out-of-scope questions declined | ${answers.outOfScopeDeclined} / ${answers.outOfScope.length} |`,
    `| in-scope questions declined | ${answers.inScopeDeclined} / ${answers.inScope.length} |`,
    `| in-scope answers without any citation | ${answers.uncitedInScope} / ${answers.inScope.length} |`,
    `| unknown citations (labels of no passage given) | ${answers.unknownCitations}, in ${answers.answersWithUnknownCitations} answers |`,
    `| mean faithfulness (judge, 0–1, advisory) | ${fixed(answers.meanFaithfulness)} over ${answers.judged} answers${answers.judgeFailures > 0 ? `, ${answers.judgeFailures} verdicts unreadable` : ''} |`,
    '',
    '| # | declined | citations | unsupported / claims | key facts | unknown | faithfulness |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...[...answers.inScope, ...answers.outOfScope]
      .sort((a, b) => a.number - b.number)
      .map(
        (entry) =>
          `| ${entry.number} | ${entry.declined ? 'yes' : 'no'} | ${entry.citations} | ${entry.checks.unsupported} / ${entry.checks.claims} | ${entry.keyFacts ? `${entry.keyFacts.filter(Boolean).length} / ${entry.keyFacts.length}` : ''} | ${cell(entry.unknownCitations.join(', ')) || 0} | ${fixed(entry.faithfulness, 2)} |`,
      ),
    '',
    ...flaggedLines(answers),
  ];
}

export async function readNotes(reportPath: string): Promise<string | undefined> {
  const notesPath = reportPath.replace(/\.md$/, '') + '.notes.md';
  return existsSync(notesPath) ? readFile(notesPath, 'utf8') : undefined;
}

/** Writes `<report>.md` and `<report>.json`; returns the paths. */
export async function writeReport(reportPath: string, markdown: string, json: unknown): Promise<{ markdown: string; json: string }> {
  const markdownPath = reportPath.endsWith('.md') ? reportPath : `${reportPath}.md`;
  const jsonPath = markdownPath.replace(/\.md$/, '.json');
  await mkdir(dirname(markdownPath), { recursive: true });
  await writeFile(markdownPath, markdown);
  await writeFile(jsonPath, `${JSON.stringify(json, roundNumbers, 2)}\n`);
  return { markdown: markdownPath, json: jsonPath };
}

/** Six significant decimals in JSON: enough to compare, stable across platforms' last-bit noise. */
function roundNumbers(_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isInteger(value) ? Math.round(value * 1e6) / 1e6 : value;
}

export { round };
