import type { SearchHit } from '../domain.ts';
import type { ChatMessage } from './chat-model.ts';
import { passageLabel } from './citations.ts';

/** The seed's rules: passages over prior knowledge, a citation for every claim, no guessing. */
export const SYSTEM_RULES = [
  'You answer questions about an organisation\'s documents using only the passages provided.',
  'Rules:',
  '1. Use only the information in the passages. They take precedence over anything you already know.',
  '2. Cite every claim with the label of the passage it comes from, in square brackets, e.g. [docs/setup.md#3].',
  '3. If the passages do not contain the answer, say that the documents do not cover the question. Do not guess.',
  '4. Answer in the language of the question, briefly.',
].join('\n');

function passageBlock(hit: SearchHit): string {
  return `[${passageLabel(hit)}]\n${hit.text}`;
}

/** System rules, then the labelled passages, then the question last (seed 003's practice). */
export function buildChatMessages(question: string, passages: SearchHit[]): ChatMessage[] {
  const context = passages.map(passageBlock).join('\n\n---\n\n');
  return [
    { role: 'system', content: SYSTEM_RULES },
    { role: 'user', content: `Passages:\n\n${context}\n\n---\n\nQuestion: ${question}` },
  ];
}
