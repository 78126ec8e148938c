import { labelsInText } from '../chat/citations.ts';
import type { ConversationTurn } from './conversation.ts';

/**
 * How many earlier questions an LLM-free follow-up carries. Measured on eval/golden/conversations.yaml
 * (30 follow-ups, BM25): 1 gives hit@5 0.900, MRR 0.591; 2 gives 0.933, 0.635, since a follow-up of a
 * follow-up finds its subject two questions back, while a change of topic loses nothing (its older
 * question ranks below); 3 adds nothing more.
 */
export const EXPANSION_USER_TURNS = 2;

/**
 * The LLM-free search query of a follow-up: the question, the previous question(s) the user asked, then the
 * names of the documents the last answer cited. A follow-up such as "and how do I turn that off?" names no
 * subject; the question before it does, and the documents its answer came from are where the conversation
 * is: a follow-up is most often answered a few paragraphs further in the same document. Their names
 * (`auto_sync`, `sync-waves`: each chunk's first line carries its source) bring that document's passages up
 * without the answer's prose, whose many words would outweigh the follow-up's own.
 */
export function expandFollowUp(question: string, earlier: readonly ConversationTurn[]): string {
  const asked = earlier.filter((turn) => turn.role === 'user').slice(-EXPANSION_USER_TURNS).map((turn) => turn.content);
  const lastAnswer = earlier.findLast((turn) => turn.role === 'assistant');
  const documents = lastAnswer ? citedDocumentNames(lastAnswer.content) : [];
  return [question, ...asked.reverse(), ...(documents.length > 0 ? [documents.join(' ')] : [])].join('\n');
}

/** `docs/user-guide/auto_sync.md#3` → `auto_sync`: the file name of each cited source, once, without folders or extension. */
function citedDocumentNames(answer: string): string[] {
  const names = labelsInText(answer)
    .map(({ label }) => label.replace(/#\d+$/, ''))
    .map((source) => source.replace(/^.*[\\/]/, '').replace(/\.[^.]+$/, ''))
    .filter((name) => name !== '' && !/^(readme|index)$/i.test(name));
  return [...new Set(names)];
}
