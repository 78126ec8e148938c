import { searchQueryFor, Telemetry, type ChatModel } from '@rag/core';
import { SEARCH_DEPTH, type EvalBackend } from './backend.ts';
import type { ConversationSet, GoldenConversation } from './conversation-set.ts';
import { firstHitRank, rankMetrics, type RankMetrics } from './metrics.ts';
import { ScriptedCondenser } from './scripted-condenser.ts';

/** How a follow-up is searched for: on its own words, LLM-free with its history, or condensed by the scripted gateway. */
export const CONVERSATION_MODES = ['without history', 'LLM-free (expanded)', 'scripted gateway (condensed)'] as const;
export type ConversationMode = (typeof CONVERSATION_MODES)[number];

/** The mode CI gates on: the embedded default has no gateway. */
export const GATED_MODE: ConversationMode = 'LLM-free (expanded)';

export interface ConversationOutcome {
  number: number;
  followUp: string;
  expectedSource: string;
  expectedSubstring: string | undefined;
  /** Per mode: the text searched for and the 1-based rank of the first hit within SEARCH_DEPTH. */
  modes: Record<ConversationMode, { query: string; rank: number | undefined }>;
}

export interface ConversationResult {
  set: string;
  file: string;
  backend: string;
  depth: number;
  conversations: ConversationOutcome[];
  metrics: Record<ConversationMode, RankMetrics>;
  gate: { minHit5: number; minMrr: number; why: string; mode: ConversationMode; passed: boolean; failures: string[] };
}

/** The text each mode searches for: the product's own searchQueryFor, with no gateway or with the scripted one. */
async function queryFor(mode: ConversationMode, entry: GoldenConversation, condenser: ChatModel, telemetry: Telemetry): Promise<string> {
  if (mode === 'without history') return entry.followUp;
  const chatModel = mode === 'scripted gateway (condensed)' ? condenser : undefined;
  return (await searchQueryFor(entry.followUp, entry.earlier, { chatModel, telemetry })).text;
}

async function runOne(entry: GoldenConversation, backend: EvalBackend, condenser: ChatModel, telemetry: Telemetry): Promise<ConversationOutcome> {
  const modes = {} as ConversationOutcome['modes'];
  for (const mode of CONVERSATION_MODES) {
    const query = await queryFor(mode, entry, condenser, telemetry);
    const passages = await backend.search(query, SEARCH_DEPTH);
    modes[mode] = { query, rank: firstHitRank(passages, { expectedSource: entry.expectedSource, expectedSubstring: entry.expectedSubstring }) };
  }
  return { number: entry.number, followUp: entry.followUp, expectedSource: entry.expectedSource, expectedSubstring: entry.expectedSubstring, modes };
}

/** Every follow-up in every mode, one at a time; the gate applies to the LLM-free mode. */
export async function runConversationSet(set: ConversationSet, backend: EvalBackend): Promise<ConversationResult> {
  const condenser = new ScriptedCondenser(new Map(set.conversations.map((entry) => [entry.followUp, entry.standalone])));
  const telemetry = new Telemetry();
  try {
    const conversations: ConversationOutcome[] = [];
    for (const entry of set.conversations) conversations.push(await runOne(entry, backend, condenser, telemetry));
    const metrics = Object.fromEntries(CONVERSATION_MODES.map((mode) => [mode, rankMetrics(conversations.map((outcome) => outcome.modes[mode].rank))])) as ConversationResult['metrics'];
    const gated = metrics[GATED_MODE];
    const failures = [
      ...(gated.hitAt5 < set.gate.minHit5 ? [`hit@5 ${gated.hitAt5.toFixed(3)} < ${set.gate.minHit5}`] : []),
      ...(gated.mrr < set.gate.minMrr ? [`MRR ${gated.mrr.toFixed(3)} < ${set.gate.minMrr}`] : []),
    ];
    return {
      set: set.name,
      file: set.file,
      backend: backend.description,
      depth: SEARCH_DEPTH,
      conversations,
      metrics,
      gate: { ...set.gate, mode: GATED_MODE, passed: failures.length === 0, failures },
    };
  } finally {
    await telemetry.shutdown();
  }
}
