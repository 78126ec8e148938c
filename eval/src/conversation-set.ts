import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { turnsFromHistory, type ConversationTurn } from '@rag/core';
import { parse } from 'yaml';
import { z } from 'zod';
import { GoldenSetError, type GoldenCorpus } from './golden-set.ts';

/**
 * A multi-turn golden set: `conversations: [{history: [{question, answer?}], follow_up, standalone,
 * expected_source, expected_substring?}]`, with `corpus` and `gate` as a golden set has them. The follow-up
 * is what is measured; `standalone` is what the scripted gateway condenses it to.
 */
const nonEmpty = z.string().trim().min(1, 'must be a non-empty string');
const fraction = z.number().min(0).max(1);

const conversationSchema = z
  .object({
    history: z.array(z.object({ question: nonEmpty, answer: nonEmpty.optional() }).strict()).min(1),
    follow_up: nonEmpty,
    standalone: nonEmpty,
    expected_source: nonEmpty,
    expected_substring: nonEmpty.optional(),
  })
  .strict();

const setSchema = z
  .object({
    corpus: z.union([
      nonEmpty.transform((path) => ({ path, include: undefined as string[] | undefined })),
      z.object({ path: nonEmpty, include: z.array(nonEmpty).min(1).optional() }).strict(),
    ]),
    gate: z.object({ min_hit5: fraction, min_mrr: fraction, why: nonEmpty }).strict(),
    conversations: z.array(conversationSchema).min(1),
  })
  .strict();

export interface GoldenConversation {
  number: number;
  /** The earlier turns as written; an answer not written down is the one the system gives (conversation-runner.ts). */
  history: Array<{ question: string; answer: string | undefined }>;
  earlier: ConversationTurn[];
  followUp: string;
  standalone: string;
  expectedSource: string;
  expectedSubstring: string | undefined;
}

export interface ConversationSet {
  name: string;
  file: string;
  corpus: GoldenCorpus;
  gate: { minHit5: number; minMrr: number; why: string };
  conversations: GoldenConversation[];
}

export function parseConversationSet(text: string, file: string, repositoryRoot: string): ConversationSet {
  const parsed = setSchema.safeParse(parse(text));
  if (!parsed.success) throw new GoldenSetError(file, parsed.error.issues.map((issue) => `${issue.path.join('.') || 'file'}: ${issue.message}`));
  const { corpus, gate, conversations } = parsed.data;
  return {
    name: file.replace(/^.*\//, '').replace(/\.ya?ml$/, ''),
    file,
    corpus: { root: isAbsolute(corpus.path) ? corpus.path : resolve(repositoryRoot, corpus.path), include: corpus.include },
    gate: { minHit5: gate.min_hit5, minMrr: gate.min_mrr, why: gate.why },
    conversations: conversations.map((entry, index) => ({
      number: index + 1,
      history: entry.history.map((turn) => ({ question: turn.question, answer: turn.answer })),
      // An earlier turn without its answer is a question the user asked and whose answer is not written down.
      earlier: turnsFromHistory(entry.history.map((turn) => ({ question: turn.question, answer: turn.answer ?? '' }))).filter((turn) => turn.content !== ''),
      followUp: entry.follow_up,
      standalone: entry.standalone,
      expectedSource: entry.expected_source,
      expectedSubstring: entry.expected_substring,
    })),
  };
}

export async function loadConversationSet(file: string, repositoryRoot: string): Promise<ConversationSet> {
  return parseConversationSet(await readFile(file, 'utf8'), file, repositoryRoot);
}
