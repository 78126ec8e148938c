import { promptLabel } from './citations.ts';

/**
 * The answer as structured output: sentences, each with the labels of the passages it uses, under a JSON schema
 * whose labels are an `enum` of this request's passages, so that a model decoding under the schema (llama.cpp's
 * and vLLM's grammar-constrained decoding) cannot write a label of no passage, nor forget the field.
 * Request shape: OpenAI's `response_format: {type: "json_schema", json_schema: {name, schema, strict}}`
 * (https://platform.openai.com/docs/guides/structured-outputs); the flat `{type: "json_schema", schema}` form is
 * ignored by llama-server, which then decodes unconstrained with HTTP 200 (ggml-org/llama.cpp PR #28697).
 */
export interface JsonSchemaFormat {
  type: 'json_schema';
  json_schema: { name: string; schema: Record<string, unknown>; strict: true };
}

/** At most this many sentences: a bound on a runaway answer, well above the brief answers the rules ask for. */
const MAX_SENTENCES = 12;

export function structuredAnswerFormat(passageCount: number): JsonSchemaFormat {
  const labels = Array.from({ length: passageCount }, (_, position) => promptLabel(position));
  const sentence = {
    type: 'object',
    properties: { text: { type: 'string' }, passages: { type: 'array', items: { type: 'string', enum: labels } } },
    required: ['text', 'passages'],
    additionalProperties: false,
  };
  return {
    type: 'json_schema',
    json_schema: {
      name: 'cited_answer',
      strict: true,
      schema: { type: 'object', properties: { sentences: { type: 'array', items: sentence, minItems: 1, maxItems: MAX_SENTENCES } }, required: ['sentences'], additionalProperties: false },
    },
  };
}

interface StructuredSentence {
  text?: unknown;
  passages?: unknown;
}

/**
 * One sentence in the product's text form: its words, then its labels as citations (`… [P1][P3].`). A gateway that
 * ignores the schema may send anything as a sentence: what is not an object (`null`) says nothing.
 */
export function renderSentence(item: StructuredSentence | null): string {
  if (item === null || typeof item !== 'object') return '';
  const text = typeof item.text === 'string' ? item.text.trim() : '';
  const labels = Array.isArray(item.passages) ? [...new Set(item.passages.filter((label): label is string => typeof label === 'string'))] : [];
  if (labels.length === 0) return text;
  const closing = /[.!?:;]+$/.exec(text)?.[0] ?? '';
  return `${text.slice(0, text.length - closing.length).trimEnd()} ${labels.map((label) => `[${label}]`).join('')}${closing}`;
}

/**
 * Reads a structured answer as it streams: each sentence object is rendered as soon as it closes. The JSON is
 * scanned character by character (strings and escapes tracked), so a `}` inside a sentence's text ends nothing.
 * A reply that is not the expected JSON (a server that ignored the schema) comes back whole, as free text.
 */
export class StructuredAnswerReader {
  private raw = '';
  private scanned = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private itemStart = -1;
  private sentences = 0;

  /** The text of the sentences completed by `token`, each followed by a space; may be empty. */
  push(token: string): string {
    this.raw += token;
    let text = '';
    for (; this.scanned < this.raw.length; this.scanned += 1) {
      const sentence = this.scan(this.raw[this.scanned]!);
      if (sentence !== undefined) text += `${sentence} `;
    }
    return text;
  }

  /**
   * What remains at the end: nothing when sentences were read (a reply cut short keeps the sentences it completed),
   * else the reply as free text (a server that ignored the schema).
   */
  finish(): string {
    return this.sentences > 0 || parseStructuredAnswer(this.raw) !== undefined ? '' : this.raw;
  }

  private scan(char: string): string | undefined {
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (char === '\\') this.escaped = true;
      else if (char === '"') this.inString = false;
      return undefined;
    }
    if (char === '"') this.inString = true;
    else if (char === '{' || char === '[') {
      this.depth += 1;
      // Depth 1 is the answer object, 2 its sentences array, 3 a sentence.
      if (this.depth === 3 && char === '{') this.itemStart = this.scanned;
    } else if (char === '}' || char === ']') {
      this.depth -= 1;
      if (this.depth === 2 && char === '}' && this.itemStart >= 0) return this.sentenceAt(this.raw.slice(this.itemStart, this.scanned + 1));
    }
    return undefined;
  }

  private sentenceAt(json: string): string | undefined {
    this.itemStart = -1;
    try {
      const sentence = renderSentence(JSON.parse(json) as StructuredSentence);
      this.sentences += 1;
      return sentence;
    } catch {
      return undefined;
    }
  }
}

/** The whole structured answer as the product's text, or undefined when `raw` is not the expected JSON. */
export function parseStructuredAnswer(raw: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const sentences = (parsed as { sentences?: unknown } | null)?.sentences;
  if (!Array.isArray(sentences)) return undefined;
  return sentences.map((item: StructuredSentence | null) => renderSentence(item)).filter((text) => text !== '').join(' ');
}
