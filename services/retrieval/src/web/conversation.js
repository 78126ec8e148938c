// The conversation's earlier turns as POST /chat takes them.

/** What POST /chat accepts of earlier turns (RAG_CONVERSATION_TOO_LONG past it): the oldest are dropped first. */
const MAX_HISTORY_PAIRS = 10;
const MAX_HISTORY_CHARS = 16000;

/** The most recent turns of `thread` ([{question, answer}], oldest first) within the bounds of POST /chat. */
export function historyToSend(thread) {
  const kept = [];
  let chars = 0;
  for (let index = thread.length - 1; index >= 0 && kept.length < MAX_HISTORY_PAIRS; index -= 1) {
    chars += thread[index].question.length + thread[index].answer.length;
    if (chars > MAX_HISTORY_CHARS) break;
    kept.unshift(thread[index]);
  }
  return kept;
}
