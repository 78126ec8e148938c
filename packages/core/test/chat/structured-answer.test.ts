import { describe, expect, it } from 'vitest';
import { parseStructuredAnswer, renderSentence, StructuredAnswerReader, structuredAnswerFormat } from '../../src/chat/structured-answer.ts';

const ANSWER = JSON.stringify({
  sentences: [
    { text: 'Snapshots are kept for thirty days.', passages: ['P1'] },
    { text: 'A brace } or "quote" in a sentence ends nothing.', passages: ['P2', 'P1', 'P2'] },
    { text: 'Yes', passages: [] },
  ],
});

describe('the structured answer', () => {
  it("asks for sentences whose labels are an enum of this request's passages, in OpenAI's json_schema form", () => {
    const format = structuredAnswerFormat(3);
    expect(format.type).toBe('json_schema');
    expect(format.json_schema).toMatchObject({ name: 'cited_answer', strict: true });
    const sentence = (format.json_schema.schema as any).properties.sentences.items;
    expect(sentence.properties.passages.items).toEqual({ type: 'string', enum: ['P1', 'P2', 'P3'] });
    expect(sentence.required).toEqual(['text', 'passages']);
  });

  it('renders each sentence with its labels as citations before its full stop', () => {
    expect(renderSentence({ text: 'Snapshots are kept for thirty days.', passages: ['P1', 'P3', 'P1'] })).toBe('Snapshots are kept for thirty days [P1][P3].');
    expect(renderSentence({ text: 'No citation here', passages: [] })).toBe('No citation here');
    expect(parseStructuredAnswer(ANSWER)).toBe('Snapshots are kept for thirty days [P1]. A brace } or "quote" in a sentence ends nothing [P2][P1]. Yes');
  });

  it('reads a streamed answer a sentence at a time, however the JSON is cut', () => {
    for (const size of [1, 3, 17]) {
      const reader = new StructuredAnswerReader();
      const pieces = ANSWER.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g'))!.map((token) => reader.push(token));
      expect(pieces.filter((piece) => piece !== ''), `tokens of ${size}`).toHaveLength(3);
      expect(pieces.join('') + reader.finish()).toBe(`${parseStructuredAnswer(ANSWER)} `);
    }
  });

  it('gives back a reply that is not the JSON asked for as free text, and keeps the sentences of one cut short', () => {
    const ignored = new StructuredAnswerReader();
    expect(ignored.push('Snapshots are kept {for} thirty days [P1].')).toBe('');
    expect(ignored.finish()).toBe('Snapshots are kept {for} thirty days [P1].');
    expect(parseStructuredAnswer('Snapshots are kept thirty days.')).toBeUndefined();
    const cut = new StructuredAnswerReader();
    expect(cut.push(ANSWER.slice(0, ANSWER.indexOf('A brace') + 10))).toBe('Snapshots are kept for thirty days [P1]. ');
    expect(cut.finish()).toBe('');
  });
});

// Issue 43 item 6: a gateway that ignores the schema may send any JSON; `null` as a sentence threw a TypeError out of
// the answer (a 500, or a stream cut by an error) instead of being read as a sentence that says nothing.
describe('a hostile structured reply', () => {
  it.each([['{"sentences":[null]}'], ['{"sentences":[null,{"text":"Kept thirty days.","passages":["P1"]}]}']])('reads a null sentence in %s as no sentence, without throwing', (raw) => {
    const expected = raw.includes('Kept') ? 'Kept thirty days [P1].' : '';
    expect(parseStructuredAnswer(raw)).toBe(expected);
    const reader = new StructuredAnswerReader();
    expect(`${reader.push(raw)}${reader.finish()}`.trim()).toBe(expected);
  });

  it('renders labels outside the enum, prototype keys included, as the unknown labels they are', () => {
    expect(parseStructuredAnswer('{"sentences":[{"text":"a","passages":["__proto__","constructor"]}]}')).toBe('a [__proto__][constructor]');
  });
});
