import type { SearchHit } from '../domain.ts';
import { reciprocalRankFusion, QDRANT_RRF_K } from '../fusion/rrf.ts';
import type { ConversationTurn } from './conversation.ts';
import { expandFollowUp } from './expand-follow-up.ts';

/**
 * A follow-up's second leg, beside its expanded query: the follow-up's own words, searched only within the
 * documents the previous question retrieved. "Which ones go first?" after "What are sync waves?" matches the
 * sync-waves page best on its own words ("first"), while the expanded query matches every chunk that says "sync";
 * and a follow-up that changes topic loses little, the leg counting half as much as the expanded query.
 */
export interface TopicLeg {
  /** The follow-up as the user wrote it. */
  text: string;
  /** The documents the previous question's search ranked first, best first. */
  sources: readonly string[];
}

/**
 * How many documents of the previous search the leg searches, and how many passages of it are read to find them.
 * Measured without a gateway on both conversation sets (eval/reports/conversations*.md): one document missed the
 * answer when the previous search ranked a neighbour first; five let the follow-up's vague words match anywhere.
 */
export const TOPIC_SOURCES = 2;
export const TOPIC_PASSAGES_READ = 5;

/**
 * The leg's RRF weight against the expanded query's 1 (Qdrant's weighting: its rank counts double). At 1 a
 * follow-up whose own words are vague ("How is it raised?") is pulled to the wrong section of the right document.
 */
export const TOPIC_LEG_WEIGHT = 0.5;

/** Candidates each leg brings to the fusion: the expanded query's rank 50 still counts against the leg's best. */
export const TOPIC_FUSION_CANDIDATES = 50;

/**
 * The text the previous question was searched with, LLM-free: itself expanded with the turns before it. Undefined
 * when the conversation holds no earlier question.
 */
export function previousSearchText(earlier: readonly ConversationTurn[]): string | undefined {
  const last = earlier.findLastIndex((turn) => turn.role === 'user');
  if (last < 0) return undefined;
  return expandFollowUp(earlier[last]!.content, earlier.slice(0, last));
}

/** The first TOPIC_SOURCES distinct documents of the previous question's passages. */
export function topicSources(previousHits: readonly SearchHit[]): string[] {
  return [...new Set(previousHits.slice(0, TOPIC_PASSAGES_READ).map((hit) => hit.source))].slice(0, TOPIC_SOURCES);
}

/**
 * The expanded query's candidates and the topic leg's, fused by weighted RRF (`k`: the hybrid search's own
 * constant). Each hit's score becomes its fused score: a rank score, not the score RAG_MIN_SCORE was set for.
 */
export function fuseTopicLeg(expanded: readonly SearchHit[], topic: readonly SearchHit[], k: number = QDRANT_RRF_K): SearchHit[] {
  const byId = new Map([...topic, ...expanded].map((hit) => [hit.id, hit]));
  const fused = reciprocalRankFusion([expanded.map((hit) => hit.id), topic.map((hit) => hit.id)], k, [1, TOPIC_LEG_WEIGHT]);
  return fused.map(({ id, score }) => ({ ...byId.get(id)!, score, fusionScore: score }));
}
