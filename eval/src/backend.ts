import type { ChatModel, ConversationTurn, FollowUpSearch as FollowUpSearchSetting } from '@rag/core';

/** What the runner needs from a retrieval system, whether it is reached over HTTP or built in process. */

export interface EvalPassage {
  source: string;
  headingPath: string;
  chunkIndex: number;
  text: string;
  /** `score` of /search: the rerank score when a reranker runs, otherwise the fusion (sparse-only: BM25) score. */
  score: number;
}

export interface ChatReply {
  answer: string;
  citations: Array<{ source: string; chunkIndex: number }>;
  unknownCitations: string[];
  mode: string;
}

export interface EvalBackend {
  /** One line for the report: where the numbers come from. */
  readonly description: string;
  search(query: string, k: number): Promise<EvalPassage[]>;
  chat(query: string): Promise<ChatReply>;
  close(): Promise<void>;
}

/** A follow-up as /chat searches it without a gateway: its expanded query, and the topic leg's documents beside it. */
export interface FollowUpSearch {
  query: string;
  topicSources: readonly string[];
  passages: EvalPassage[];
}

/** A backend that can search a follow-up as the product does (the conversation runner's). */
export interface ConversationBackend extends EvalBackend {
  /** Without `gateway`, as without a gateway; with one, condensed by its model and searched as FOLLOW_UP_SEARCH says. */
  searchFollowUp(question: string, earlier: readonly ConversationTurn[], k: number, gateway?: { chatModel: ChatModel; followUpSearch: FollowUpSearchSetting }): Promise<FollowUpSearch>;
}

/** /search refuses k above 50; the golden-set runner reads this deep. */
export const SEARCH_DEPTH = 10;
