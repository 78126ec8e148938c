import { checkGrounding, type Grounding } from '../answer-check/grounding.ts';
import { droppedNotice, verifyAnswer, type UnsupportedClaims } from '../answer-check/verified-answer.ts';
import { VerifiedStream } from '../answer-check/verified-stream.ts';
import { boundedAnswerStream, cutAnswer } from '../chat/answer-length.ts';
import type { ChatMessage, ChatModel, CompletionOptions, TokenUsage } from '../chat/chat-model.ts';
import { passagesByLabel, resolveCitations, rewritePromptLabels, toCitation, type Citation } from '../chat/citations.ts';
import { extractiveAnswerWithSources, NOT_COVERED_ANSWER } from '../chat/extractive.ts';
import { passageExcerpt } from '../chat/passage-excerpt.ts';
import { buildChatMessages } from '../chat/prompt.ts';
import { parseStructuredAnswer, StructuredAnswerReader, structuredAnswerFormat } from '../chat/structured-answer.ts';
import type { StructuredOutput } from '../chat/structured-output.ts';
import { queryCoverage } from '../chat/query-coverage.ts';
import { withholdSuspectPassages, type SuspectPassages, type WithheldPassage } from '../chat/withheld-passages.ts';
import { withEarlierTurns, type ConversationTurn } from '../conversation/conversation.ts';
import { searchQueryFor, type SearchQuery } from '../conversation/search-query.ts';
import { previousSearchText, TOPIC_PASSAGES_READ, topicSources, type TopicLeg } from '../conversation/topic-leg.ts';
import { fuseFollowUpLegs, type FollowUpSearch } from '../conversation/fused-follow-up.ts';
import type { SearchHit } from '../domain.ts';
import type { Logger } from '../logger.ts';
import { timed, type Telemetry } from '../telemetry.ts';
import { inSpan, inStreamSpan, inSyncSpan, modelCallSpan, suiteTracer } from '../tracing/spans.ts';
import type { Retrieval, Retriever } from './retrieve.ts';
import type { SearchControls } from '../search-filter/search-controls.ts';

export type AnswerMode = 'llm' | 'extractive';

export interface ChatAnswer {
  answer: string;
  citations: Citation[];
  mode: AnswerMode;
  usage?: TokenUsage | undefined;
  unknownCitations: string[];
  /** Whether the reranker ordered the passages (see Retrieval.reranked); undefined without a reranker. */
  reranked?: boolean | undefined;
  /** What was searched for a follow-up (condensed or expanded from the earlier turns); absent without earlier turns. */
  searchQuery?: string | undefined;
  /** A generated answer checked sentence by sentence against its passages; absent for extractive and not-covered answers. */
  grounding?: Grounding | undefined;
  /** Retrieved passages written to the model, kept out of the answer (SUSPECT_PASSAGES); absent when none. */
  withheld?: WithheldPassage[] | undefined;
}

export type AnswerStreamEvent =
  | { type: 'citations'; citations: Citation[]; reranked?: boolean | undefined; searchQuery?: string | undefined }
  | { type: 'token'; text: string }
  | { type: 'done'; answer: ChatAnswer };

export interface AnswererOptions {
  retriever: Retriever;
  chatModel?: ChatModel | undefined;
  /** RAG_MIN_SCORE: below it the documents are taken not to cover the question. */
  minScore?: number | undefined;
  telemetry: Telemetry;
  /** CONDENSE_TIMEOUT_MS: past it a follow-up is searched with the LLM-free query (search-query.ts). */
  condenseTimeoutMs?: number | undefined;
  /** Where a failed condensation of a follow-up is reported (a warning; the request goes on). */
  logger?: Pick<Logger, 'warn'> | undefined;
  /** UNSUPPORTED_CLAIMS: a generated sentence no passage supports is shown marked (the default) or left out. */
  unsupportedClaims?: UnsupportedClaims | undefined;
  /** GATEWAY_STRUCTURED: whether answers are asked for as JSON sentences with their passages' labels. */
  structuredOutput?: StructuredOutput | undefined;
  /** PROMPT_PASSAGE_CHARS: each passage cut to this many characters around what answers (passage-excerpt.ts); 0 or unset: whole. */
  promptPassageChars?: number | undefined;
  /** SUSPECT_PASSAGES: passages written to the model are withheld from the answer (the default) or answered from. */
  suspectPassages?: SuspectPassages | undefined;
  /** FOLLOW_UP_SEARCH: a condensed follow-up fused with its LLM-free expansion (the default) or searched alone. */
  followUpSearch?: FollowUpSearch | undefined;
}

/**
 * Without RAG_MIN_SCORE, the best passage must contain at least this share of the question's terms.
 * Chosen from eval/reports: at 0.5 the project-docs set refused 39 of 87 answerable paraphrases; at
 * 0.25, 3 of 87, while questions sharing nothing with the documents are still declined.
 */
export const MIN_QUERY_COVERAGE = 0.25;

/** /chat: retrieve, then answer from the passages — with the gateway's model, or extractively. */
export class Answerer {
  constructor(private readonly options: AnswererOptions) {}

  get mode(): AnswerMode {
    return this.options.chatModel ? 'llm' : 'extractive';
  }

  /**
   * `visibleGroups`: the caller's groups (see Retriever.retrieve); the answer is made of their passages only.
   * `earlier`: the conversation's earlier turns, oldest first: a follow-up is searched for with a query made
   * from them (searchQueryFor), and answered as the user asked it, the turns before it in the prompt.
   */
  async answer(question: string, k: number, visibleGroups: readonly string[], signal?: AbortSignal, earlier: readonly ConversationTurn[] = [], controls: SearchControls = {}): Promise<ChatAnswer> {
    const { search, passages, reranked, withheld } = await this.relevantPassages(question, k, visibleGroups, signal, earlier, controls);
    return { ...(await this.answerFrom(question, search, passages, earlier, signal, controls)), reranked, ...searchQueryField(search), ...withheldField(withheld) };
  }

  async *stream(question: string, k: number, visibleGroups: readonly string[], signal?: AbortSignal, earlier: readonly ConversationTurn[] = [], controls: SearchControls = {}): AsyncIterable<AnswerStreamEvent> {
    const { search, passages, reranked, withheld } = await this.relevantPassages(question, k, visibleGroups, signal, earlier, controls);
    const chatModel = this.options.chatModel;
    if (passages.length === 0 || !chatModel) {
      const answer = { ...(passages.length === 0 ? this.notCovered() : this.extractive(search.text, passages, controls)), reranked, ...searchQueryField(search), ...withheldField(withheld) };
      yield { type: 'citations', citations: answer.citations, reranked, ...searchQueryField(search) };
      yield { type: 'token', text: answer.answer };
      yield { type: 'done', answer };
      return;
    }
    yield { type: 'citations', citations: passages.map(toCitation), reranked, ...searchQueryField(search) };
    const started = performance.now();
    let usage: TokenUsage | undefined;
    const verified = new VerifiedStream(passages, this.unsupportedClaims, this.options.retriever.bm25Language, question);
    const structured = await this.structured();
    const reader = structured ? new StructuredAnswerReader() : undefined;
    const messages = this.prompt(question, passages, earlier, structured);
    // The span lasts until the last token: a streamed completion's duration is the stream's.
    const [name, options] = modelCallSpan('chat', chatModel.modelId, GATEWAY_PROVIDER, { 'gen_ai.request.stream': true });
    const span = suiteTracer().startSpan(name, options);
    for await (const event of boundedAnswerStream(inStreamSpan(span, () => chatModel.stream(messages, signal, this.completionOptions(structured, passages))))) {
      if (event.type === 'token') {
        const settled = verified.push(reader ? reader.push(event.text) : event.text);
        if (settled !== '') yield { type: 'token', text: settled };
      } else {
        usage = event.usage;
        if (usage) span.setAttributes(usageAttributes(usage));
      }
    }
    this.recordGateway(chatModel, (performance.now() - started) / 1000);
    const unread = reader?.finish() ?? '';
    if (unread !== '') verified.push(unread);
    // A structured answer's sentences arrive each followed by a space.
    const answer = this.fromModel(question, verified.text.trimEnd(), passages, usage);
    const rest = verified.finish(answer.answer);
    if (rest !== '') yield { type: 'token', text: rest };
    yield { type: 'done', answer: { ...answer, reranked, ...searchQueryField(search), ...withheldField(withheld) } };
  }

  private async answerFrom(question: string, search: SearchQuery, passages: SearchHit[], earlier: readonly ConversationTurn[], signal: AbortSignal | undefined, controls: SearchControls): Promise<ChatAnswer> {
    if (passages.length === 0) return this.notCovered();
    const chatModel = this.options.chatModel;
    // Extractive answers quote the sentences that hold the searched terms: a follow-up's own words may name none.
    if (!chatModel) return this.extractive(search.text, passages, controls);
    const structured = await this.structured();
    const messages = this.prompt(question, passages, earlier, structured);
    const [name, options] = modelCallSpan('chat', chatModel.modelId, GATEWAY_PROVIDER);
    const completion = await inSpan(name, options, async (span) => {
      const result = await timed(
        () => chatModel.complete(messages, signal, this.completionOptions(structured, passages)),
        (seconds) => this.recordGateway(chatModel, seconds),
      );
      if (result.usage) span.setAttributes(usageAttributes(result.usage));
      return result;
    });
    const content = cutAnswer(completion.content);
    const modelText = structured ? (parseStructuredAnswer(content) ?? content) : content;
    return this.fromModel(question, modelText, passages, completion.usage);
  }

  private prompt(question: string, passages: SearchHit[], earlier: readonly ConversationTurn[], structured: boolean): ChatMessage[] {
    return inSyncSpan('build prompt', { attributes: { 'rag.prompt.passages': passages.length, 'rag.prompt.structured': structured } }, () =>
      withEarlierTurns(buildChatMessages(question, this.promptPassages(question, passages), undefined, { structured }), earlier),
    );
  }

  /** What the prompt carries of each passage; answers are still checked against the whole passages. */
  private promptPassages(question: string, passages: SearchHit[]): SearchHit[] {
    const maxChars = this.options.promptPassageChars;
    return maxChars ? passages.map((hit) => passageExcerpt(question, hit, maxChars, this.options.retriever.bm25Language)) : passages;
  }

  /** Whether this answer is asked for as structured output (GATEWAY_STRUCTURED; free text without the setting). */
  private async structured(): Promise<boolean> {
    return (await this.options.structuredOutput?.enabled()) ?? false;
  }

  private completionOptions(structured: boolean, passages: readonly SearchHit[]): CompletionOptions | undefined {
    return structured ? { responseFormat: structuredAnswerFormat(passages.length) } : undefined;
  }

  /**
   * What /chat answers from, before relevance is judged: the question's passages, or a follow-up's: LLM-free, its
   * expanded query beside its topic leg (conversation/topic-leg.ts); condensed by the gateway, that query's passages
   * fused with the LLM-free ones (FOLLOW_UP_SEARCH=fused, conversation/fused-follow-up.ts) or alone. `rankScored`: the
   * hits carry a fused rank score, not the score RAG_MIN_SCORE was set for.
   */
  async retrieveFor(question: string, k: number, visibleGroups: readonly string[], signal?: AbortSignal, earlier: readonly ConversationTurn[] = [], controls: SearchControls = {}): Promise<{ search: SearchQuery; retrieval: Retrieval; topic: TopicLeg | undefined; rankScored: boolean }> {
    const search = await searchQueryFor(question, earlier, this.options, signal);
    const expandedText = search.method === 'expanded' ? search.text : this.fusesFollowUps ? search.expanded : undefined;
    const topic = expandedText !== undefined ? await this.topicLeg(question, earlier, visibleGroups, signal, controls) : undefined;
    const retriever = this.options.retriever;
    if (search.method !== 'condensed' || expandedText === undefined) {
      return { search, retrieval: await retriever.retrieve(search.text, k, visibleGroups, signal, controls, topic), topic, rankScored: topic !== undefined };
    }
    const [condensed, expanded] = await Promise.all([retriever.retrieve(search.text, k, visibleGroups, signal, controls), retriever.retrieve(expandedText, k, visibleGroups, signal, controls, topic)]);
    const hits = fuseFollowUpLegs(condensed.hits, expanded.hits, retriever.fusionK).slice(0, k);
    return { search, retrieval: { hits, reranked: condensed.reranked ?? expanded.reranked }, topic, rankScored: true };
  }

  private get fusesFollowUps(): boolean {
    return (this.options.followUpSearch ?? 'fused') === 'fused';
  }

  /** The follow-up's own words, to be searched within the documents the previous question's search ranked first. */
  private async topicLeg(question: string, earlier: readonly ConversationTurn[], visibleGroups: readonly string[], signal: AbortSignal | undefined, controls: SearchControls): Promise<TopicLeg | undefined> {
    const previous = previousSearchText(earlier);
    if (previous === undefined) return undefined;
    const sources = topicSources(await this.options.retriever.search(previous, TOPIC_PASSAGES_READ, visibleGroups, signal, controls));
    return sources.length > 0 ? { text: question, sources } : undefined;
  }

  /**
   * The retrieved passages, or none when the best one is not relevant enough to answer from; either way without
   * the passages written to the model (withheld), which are judged after relevance so that they cannot make a
   * question look covered or uncovered.
   */
  private async relevantPassages(
    question: string,
    k: number,
    visibleGroups: readonly string[],
    signal: AbortSignal | undefined,
    earlier: readonly ConversationTurn[],
    controls: SearchControls,
  ): Promise<{ search: SearchQuery; passages: SearchHit[]; reranked: boolean | undefined; withheld: WithheldPassage[] }> {
    const { search, retrieval, rankScored: fusedFollowUp } = await this.retrieveFor(question, k, visibleGroups, signal, earlier, controls);
    const best = retrieval.hits[0];
    const rankScored = controls.freshness !== undefined || fusedFollowUp;
    // A fused follow-up's best passage may come from either leg: it is judged against the text of both.
    const searched = search.method === 'condensed' && fusedFollowUp && search.expanded !== undefined ? [search.text, search.expanded] : [search.text];
    const relevant = best !== undefined && searched.some((text) => this.isRelevant(text, best, rankScored));
    const { kept, withheld } = withholdSuspectPassages(relevant ? retrieval.hits : [], this.options.suspectPassages ?? 'withhold');
    return { search, passages: kept, reranked: retrieval.reranked, withheld };
  }

  /**
   * RAG_MIN_SCORE is compared with the kind of score it was set for: with a reranker, the rerank
   * probability, which a result has only when the reranker ran (more than k candidates). Otherwise,
   * and when RAG_MIN_SCORE is unset, the question-coverage rule decides; so it does for a rank score: a fused score
   * a freshness boost changed (a rank score plus a bonus), or a follow-up's topic fusion, neither the score RAG_MIN_SCORE was set for.
   */
  private isRelevant(question: string, best: SearchHit, rankScored: boolean): boolean {
    const { minScore, retriever } = this.options;
    const scoreIsComparable = minScore !== undefined && (retriever.reranks ? best.reranked === true : !rankScored);
    return scoreIsComparable ? best.score >= minScore : queryCoverage(question, best.text, retriever.bm25Language) >= MIN_QUERY_COVERAGE;
  }

  /**
   * The model cites the prompt's labels ([P2]); the answer shows them as `[source#chunk_index]`, each sentence's
   * citations set by the grounding check (verified-answer.ts), and the not-covered answer when no claim is supported.
   */
  private fromModel(question: string, modelText: string, passages: SearchHit[], usage: TokenUsage | undefined): ChatAnswer {
    if (usage) this.options.telemetry.recordTokens(this.options.chatModel!.modelId, usage.promptTokens, usage.completionTokens);
    const byLabel = passagesByLabel(passages);
    const grounding = inSyncSpan('check grounding', {}, () => checkGrounding(modelText, passages, this.options.retriever.bm25Language, question));
    const { unknownCitations } = resolveCitations(modelText, passages);
    const verified = verifyAnswer(modelText, grounding, this.unsupportedClaims, (label) => byLabel.has(label));
    if (verified.noSupportedClaim) return { answer: NOT_COVERED_ANSWER, mode: 'llm', usage, citations: [], unknownCitations, grounding };
    const text = verified.dropped > 0 ? `${verified.text}\n\n${droppedNotice(verified.dropped)}` : verified.text;
    return { answer: rewritePromptLabels(text, byLabel), mode: 'llm', usage, citations: resolveCitations(text, passages).citations, unknownCitations, grounding };
  }

  private get unsupportedClaims(): UnsupportedClaims {
    return this.options.unsupportedClaims ?? 'mark';
  }

  private extractive(question: string, passages: SearchHit[], controls: SearchControls): ChatAnswer {
    // Cited by construction: a label a quoted document wrote itself is quoted text, not a citation. With freshness
    // asked for, the newer passage the ranking put first stays first.
    const { answer, quoted } = extractiveAnswerWithSources(question, passages, this.options.retriever.bm25Language, { keepRankOrder: controls.freshness !== undefined });
    return { answer, mode: 'extractive', citations: quoted.map(toCitation), unknownCitations: [] };
  }

  private notCovered(): ChatAnswer {
    return { answer: NOT_COVERED_ANSWER, citations: [], mode: this.mode, unknownCitations: [] };
  }

  private recordGateway(chatModel: ChatModel, seconds: number): void {
    this.options.telemetry.recordStage('gateway', seconds);
    this.options.telemetry.recordModelCall('chat', GATEWAY_PROVIDER, chatModel.modelId, seconds);
  }
}

function withheldField(withheld: WithheldPassage[]): { withheld?: WithheldPassage[] } {
  return withheld.length > 0 ? { withheld } : {};
}

function searchQueryField(search: SearchQuery): { searchQuery?: string } {
  return search.method === 'question' ? {} : { searchQuery: search.text };
}

/** The gateway speaks OpenAI's API (gen_ai.provider.name, as the metrics name it). */
const GATEWAY_PROVIDER = 'openai';

function usageAttributes(usage: TokenUsage) {
  return { 'gen_ai.usage.input_tokens': usage.promptTokens, 'gen_ai.usage.output_tokens': usage.completionTokens };
}
