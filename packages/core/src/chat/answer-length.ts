import type { ChatStreamEvent } from './chat-model.ts';

/**
 * The longest model reply an answer reads, in characters (a structured answer's JSON included). The longest answer in
 * eval/reports is 1,500 characters; a reply past this is a model running on, or a hostile gateway. A streamed answer
 * is checked again, sentence by sentence, as each one settles (answer-check/verified-stream.ts), work that grows with
 * the square of the reply: 16,000 characters in 4-character tokens held the event loop 5 s, every other request with it.
 */
export const MAX_ANSWER_CHARS = 6_000;

/** The reply's first MAX_ANSWER_CHARS characters. */
export function cutAnswer(text: string): string {
  return prefix(text, MAX_ANSWER_CHARS);
}

/**
 * The stream's events until its tokens reach MAX_ANSWER_CHARS, the last one cut there; the rest is not read (leaving
 * the loop cancels the gateway's body, which closes the connection, and llama-server and vLLM stop generating). No
 * `max_tokens` is asked: it would change every answer request, and with it every key of eval's answer cache
 * (eval/src/cached-chat-model.ts), and a reasoning model's thinking counts against it.
 */
export async function* boundedAnswerStream(events: AsyncIterable<ChatStreamEvent>): AsyncGenerator<ChatStreamEvent> {
  let read = 0;
  for await (const event of events) {
    if (event.type !== 'token') {
      yield event;
      continue;
    }
    const text = prefix(event.text, MAX_ANSWER_CHARS - read);
    read += text.length;
    if (text !== '') yield { type: 'token', text };
    if (text.length < event.text.length) return;
  }
}

/** The first `length` UTF-16 units of `text`, never splitting a surrogate pair. */
function prefix(text: string, length: number): string {
  if (text.length <= length) return text;
  if (length <= 0) return '';
  return text.slice(0, /[\uD800-\uDBFF]/.test(text[length - 1]!) ? length - 1 : length);
}
