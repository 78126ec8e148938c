import { Telemetry, turnsFromHistory, type ChatModel, type ConversationTurn } from '@rag/core';
import { SEARCH_DEPTH, type ConversationBackend, type EvalBackend, type EvalPassage } from './backend.ts';
import type { ConversationSet, GoldenConversation } from './conversation-set.ts';
import { firstHitRank, rankMetrics, type RankMetrics } from './metrics.ts';
import { ScriptedCondenser } from './scripted-condenser.ts';

/**
 * How a follow-up is searched for: on its own words, LLM-free with its history, or condensed by the scripted gateway,
 * alone (FOLLOW_UP_SEARCH=condensed) or fused with the LLM-free search (fused, the default).
 */
export const CONVERSATION_MODES = ['without history', 'LLM-free (expanded)', 'scripted gateway (condensed)', 'scripted gateway (fused)'] as const;
/** With a real model behind the gateway (GATEWAY_URL or --serve): its own condensation, the product's condense prompt. */
export const REAL_CONDENSER_MODES = ['model (condensed)', 'model (fused)'] as const;
export type ConversationMode = (typeof CONVERSATION_MODES)[number] | (typeof REAL_CONDENSER_MODES)[number];

/** The mode CI gates on: the embedded default has no gateway. */
export const GATED_MODE: ConversationMode = 'LLM-free (expanded)';

/** What one mode searched for: the text, and for the LLM-free mode the documents its topic leg searched. */
export interface ModeSearch {
  query: string;
  topicSources?: readonly string[] | undefined;
}

export interface ConversationOutcome {
  number: number;
  followUp: string;
  expectedSource: string;
  expectedSubstring: string | undefined;
  /** Per mode: the text searched for, the topic leg's documents (LLM-free mode), and the 1-based rank of the first hit within SEARCH_DEPTH. */
  modes: Record<ConversationMode, ModeSearch & { rank: number | undefined }>;
}

export interface ConversationResult {
  set: string;
  file: string;
  backend: string;
  depth: number;
  /** The modes measured, in report order; the model's only with a gateway. */
  modes: ConversationMode[];
  /** The gateway's model, when it condensed. */
  condenser?: string | undefined;
  conversations: ConversationOutcome[];
  metrics: Partial<Record<ConversationMode, RankMetrics>>;
  gate: { minHit5: number; minMrr: number; why: string; mode: ConversationMode; passed: boolean; failures: string[] };
}

/**
 * What each mode searches for and finds: the product's own searchQueryFor with the scripted or the real condenser
 * (a condensed query is searched as it is), and the product's LLM-free follow-up search (expanded query + topic leg).
 */
async function searchFor(mode: ConversationMode, entry: GoldenConversation, earlier: ConversationTurn[], backend: ConversationBackend, condensers: Condensers, telemetry: Telemetry): Promise<ModeSearch & { passages: EvalPassage[] }> {
  if (mode === 'without history') return { query: entry.followUp, passages: await backend.search(entry.followUp, SEARCH_DEPTH) };
  if (mode === GATED_MODE) return backend.searchFollowUp(entry.followUp, earlier, SEARCH_DEPTH);
  const chatModel = mode.startsWith('scripted gateway') ? condensers.scripted : condensers.model!;
  const { query, passages } = await backend.searchFollowUp(entry.followUp, earlier, SEARCH_DEPTH, { chatModel, followUpSearch: mode.endsWith('(fused)') ? 'fused' : 'condensed' });
  return { query, passages };
}

/**
 * The earlier turns a client would send: an answer the set does not write down is the one this system gives
 * to that question (the extractive answer in the embedded default, with its [source#n] citations), asked once.
 */
async function earlierTurns(entry: GoldenConversation, backend: EvalBackend, answers: Map<string, Promise<string>>): Promise<ConversationTurn[]> {
  const history = await Promise.all(
    entry.history.map(async ({ question, answer }) => {
      if (answer !== undefined) return { question, answer };
      if (!answers.has(question)) answers.set(question, backend.chat(question).then((reply) => reply.answer));
      return { question, answer: await answers.get(question)! };
    }),
  );
  return turnsFromHistory(history);
}

interface Condensers {
  scripted: ChatModel;
  model: ChatModel | undefined;
}

async function runOne(entry: GoldenConversation, backend: ConversationBackend, condensers: Condensers, modeList: ConversationMode[], telemetry: Telemetry, answers: Map<string, Promise<string>>): Promise<ConversationOutcome> {
  const modes = {} as ConversationOutcome['modes'];
  const earlier = await earlierTurns(entry, backend, answers);
  for (const mode of modeList) {
    const { passages, ...searched } = await searchFor(mode, entry, earlier, backend, condensers, telemetry);
    modes[mode] = { ...searched, rank: firstHitRank(passages, { expectedSource: entry.expectedSource, expectedSubstring: entry.expectedSubstring }) };
  }
  return { number: entry.number, followUp: entry.followUp, expectedSource: entry.expectedSource, expectedSubstring: entry.expectedSubstring, modes };
}

/** Every follow-up in every mode, one at a time; the gate applies to the LLM-free mode. */
export async function runConversationSet(set: ConversationSet, backend: ConversationBackend, model?: ChatModel): Promise<ConversationResult> {
  const condensers = { scripted: new ScriptedCondenser(new Map(set.conversations.map((entry) => [entry.followUp, entry.standalone]))), model };
  const modeList: ConversationMode[] = [...CONVERSATION_MODES, ...(model ? REAL_CONDENSER_MODES : [])];
  const telemetry = new Telemetry();
  try {
    const conversations: ConversationOutcome[] = [];
    const answers = new Map<string, Promise<string>>();
    for (const entry of set.conversations) conversations.push(await runOne(entry, backend, condensers, modeList, telemetry, answers));
    const metrics = Object.fromEntries(modeList.map((mode) => [mode, rankMetrics(conversations.map((outcome) => outcome.modes[mode].rank))])) as ConversationResult['metrics'];
    const gated = metrics[GATED_MODE]!;
    const failures = [
      ...(gated.hitAt5 < set.gate.minHit5 ? [`hit@5 ${gated.hitAt5.toFixed(3)} < ${set.gate.minHit5}`] : []),
      ...(gated.mrr < set.gate.minMrr ? [`MRR ${gated.mrr.toFixed(3)} < ${set.gate.minMrr}`] : []),
    ];
    return {
      set: set.name,
      file: set.file,
      backend: backend.description,
      depth: SEARCH_DEPTH,
      modes: modeList,
      ...(model ? { condenser: model.modelId } : {}),
      conversations,
      metrics,
      gate: { ...set.gate, mode: GATED_MODE, passed: failures.length === 0, failures },
    };
  } finally {
    await telemetry.shutdown();
  }
}
