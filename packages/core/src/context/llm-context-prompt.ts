import type { ChatMessage } from '../chat/chat-model.ts';

/**
 * The prompt the gateway writes each chunk's context from, after Anthropic's contextual retrieval
 * (https://www.anthropic.com/news/contextual-retrieval). Any change to the messages below, or to how
 * the answer is cleaned, must bump the version: the collection records it, and the cache keys on it.
 */
export const CONTEXT_PROMPT_VERSION = 'llm-1';

/** A context longer than this is cut: it is a sentence or two, not a summary. */
const MAX_CONTEXT_CHARS = 600;

export function contextMessages(document: string, chunkText: string, maxDocumentChars: number): ChatMessage[] {
  const window = documentWindow(document, chunkText, maxDocumentChars);
  return [
    {
      role: 'user',
      content: `<document>\n${window}\n</document>\nHere is the chunk we want to situate within the whole document\n<chunk>\n${chunkText}\n</chunk>\nPlease give a short succinct context to situate this chunk within the overall document for the purposes of improving search retrieval of the chunk. Answer only with the succinct context and nothing else.`,
    },
  ];
}

/** The model's answer as a context: reasoning blocks (Qwen3's <think>) and surrounding quotes dropped, one line, bounded. */
export function cleanContext(answer: string): string {
  const text = answer
    .replace(/<think>[\s\S]*?<\/think>/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^(["'])(.*)\1$/, '$2');
  return text.length <= MAX_CONTEXT_CHARS ? text : `${text.slice(0, MAX_CONTEXT_CHARS).replace(/\s+\S*$/, '')}…`;
}

/**
 * The whole document when it fits, else `maxChars` of it centred on the chunk (found by its first line
 * of body text; the document's start when not found), with the cuts marked. The title is usually in the
 * chunk's own `<source> > <headings>` line, so the window loses little.
 */
export function documentWindow(document: string, chunkText: string, maxChars: number): string {
  if (document.length <= maxChars) return document;
  const body = chunkText.slice(chunkText.indexOf('\n\n') + 2);
  const probe = body.split('\n').find((line) => line.trim().length >= 20)?.slice(0, 120) ?? body.slice(0, 120);
  const found = probe ? document.indexOf(probe) : -1;
  const centre = found < 0 ? 0 : found + Math.min(body.length, maxChars) / 2;
  const start = Math.max(0, Math.min(document.length - maxChars, Math.round(centre - maxChars / 2)));
  const end = start + maxChars;
  return `${start > 0 ? '[…]\n' : ''}${document.slice(start, end)}${end < document.length ? '\n[…]' : ''}`;
}
