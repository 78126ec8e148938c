import { CONDENSE_PROMPT_VERSION } from '@rag/core';
import type { ConversationResult, ModeSearch } from './conversation-runner.ts';

const fixed = (value: number) => value.toFixed(3);
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ⏎ ');
const rank = (value: number | undefined) => (value === undefined ? '–' : String(value));

/** The expanded query, then the documents its topic leg searched the follow-up's own words in. */
function llmFreeQuery(searched: ModeSearch): string {
  return searched.topicSources?.length ? `${searched.query} ⟂ topic leg in ${searched.topicSources.join(', ')}` : searched.query;
}

/** The follow-ups' numbers per mode, then each conversation's ranks and what was searched. No timestamp (see report.ts). */
export function conversationMarkdown(result: ConversationResult, notes: string | undefined): string {
  const lines = [
    `# Conversations: ${result.set}`,
    '',
    `Set \`${result.file}\`, ${result.conversations.length} follow-ups, ${result.backend}, depth ${result.depth}. Condense prompt ${CONDENSE_PROMPT_VERSION}.`,
    '',
    '| follow-up searched | hit@1 | hit@5 | MRR |',
    '| --- | --- | --- | --- |',
    ...result.modes.map((mode) => `| ${mode}${mode.startsWith('model') ? ` (${result.condenser})` : ''} | ${fixed(result.metrics[mode]!.hitAt1)} | ${fixed(result.metrics[mode]!.hitAt5)} | ${fixed(result.metrics[mode]!.mrr)} |`),
    '',
    `Gate (${result.gate.mode}): hit@5 ≥ ${result.gate.minHit5}, MRR ≥ ${result.gate.minMrr}: **${result.gate.passed ? 'passed' : `failed (${result.gate.failures.join('; ')})`}**. ${result.gate.why}`,
    '',
    ...(notes ? [notes.trim(), ''] : []),
    '## Follow-ups',
    '',
    `| # | follow-up | expected | ${result.modes.map((mode) => `rank ${mode}`).join(' | ')} | LLM-free query |`,
    `| --- | --- | --- | ${result.modes.map(() => '---').join(' | ')} | --- |`,
    ...result.conversations.map(
      (outcome) =>
        `| ${outcome.number} | ${cell(outcome.followUp)} | ${cell(`${outcome.expectedSource}${outcome.expectedSubstring ? ` ∋ "${outcome.expectedSubstring}"` : ''}`)} | ${result.modes.map((mode) => rank(outcome.modes[mode].rank)).join(' | ')} | ${cell(llmFreeQuery(outcome.modes['LLM-free (expanded)']))} |`,
    ),
    '',
  ];
  return lines.join('\n');
}
