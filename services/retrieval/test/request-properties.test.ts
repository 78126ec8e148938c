/**
 * No request body, however odd, gets a 5xx from /search or /chat: random JSON values, raw strings that
 * may not be JSON, huge numbers, deep nesting and wrong types for query, k and stream, sent with
 * fast-check to the real app over real HTTP. A refusal is always our error shape with the registry's
 * status for its code.
 */
import { errorCatalog, type ErrorCode } from '@rag/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from './test-stack.ts';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});

afterAll(async () => {
  await stack.close();
});

/** A JSON number as text, beyond what a double holds: 400-digit integers, 1e999, -0, 5e-400. */
const hugeNumber = fc.oneof(
  fc.stringMatching(/^-?[1-9][0-9]{20,400}$/),
  fc.stringMatching(/^-?[1-9]\.[0-9]{1,30}[eE][+-]?[0-9]{3,5}$/),
  fc.constantFrom('-0', '1e999', '-1e999', '5e-400', '9007199254740993', '3.0', '1E1', '50.0000000000000001'),
);

/** Anything as a field's value: JSON of every type, nested, huge and wrong. */
const anyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
  fc.string({ unit: 'binary', maxLength: 300 }).map((value) => JSON.stringify(value)),
  fc.string({ unit: 'grapheme', minLength: 1900, maxLength: 2100 }).map((value) => JSON.stringify(value)),
  hugeNumber,
  fc.integer({ min: 1, max: 5000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
  fc.integer({ min: 1, max: 5000 }).map((depth) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)),
);

/** A body with any subset of query, k and stream, each of any value, and maybe one more key. */
const fieldsBody = fc
  .tuple(
    fc.record(
      { query: fc.oneof(anyValue, fc.constantFrom('"backups"', '"how long are snapshots kept?"')), k: fc.oneof(anyValue, fc.constantFrom('1', '5', '50')), stream: fc.oneof(anyValue, fc.constantFrom('true', 'false')) },
      { requiredKeys: [] },
    ),
    fc.option(fc.tuple(fc.constantFrom('__proto__', 'constructor', 'extra', 'query', ''), anyValue)),
  )
  .map(([fields, extra]) => {
    const entries = Object.entries(fields);
    if (extra) entries.push(extra);
    return `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`;
  });

/** Close to valid: any text as query (lone surrogates, control characters, up to 2000), k around its bounds, stream or not. */
const nearlyValidBody = fc
  .record(
    {
      query: fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 300 }), fc.string({ unit: 'grapheme', minLength: 1990, maxLength: 2000 })),
      k: fc.integer({ min: -2, max: 52 }),
      stream: fc.boolean(),
    },
    { requiredKeys: ['query'] },
  )
  .map((fields) => JSON.stringify(fields));

const body = fc.oneof(
  { weight: 3, arbitrary: nearlyValidBody },
  fieldsBody,
  anyValue,
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.jsonValue().map((value) => JSON.stringify(value)),
);

async function send(route: string, text: string): Promise<{ status: number; answer: unknown }> {
  const response = await fetch(`${stack.baseUrl}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
  const raw = await response.text();
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) return { status: response.status, answer: raw };
  return { status: response.status, answer: JSON.parse(raw) };
}

describe.each(['/search', '/chat'])('random request bodies on %s', (route) => {
  it('never get a 5xx; refusals are our error shape with the status of their code', async () => {
    await fc.assert(
      fc.asyncProperty(body, async (text) => {
        const { status, answer } = await send(route, text);
        expect(status, text.slice(0, 200)).toBeLessThan(500);
        if (status >= 400) {
          const { error } = answer as { error: { code: ErrorCode; message: string } };
          expect(Object.keys(answer as object)).toEqual(['error']);
          expect(errorCatalog[error.code]?.status).toBe(status);
          expect(typeof error.message).toBe('string');
        } else {
          expect(status).toBe(200);
        }
      }),
      { numRuns: 150 },
    );
  });
});
