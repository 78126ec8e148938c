import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorsPageRows } from '../../src/errors-page.ts';
import { errorCatalog, RagError, toRagError, type ErrorCode } from '../../src/errors.ts';

const errorsPage = readFileSync(new URL('../../../../docs/errors.md', import.meta.url), 'utf8');

describe('the error registry', () => {
  it.each(errorsPageRows())('docs/errors.md has the row %s (run pnpm docs:errors after changing the registry)', (row) => {
    expect(errorsPage).toContain(row);
  });

  it('documents each code once, with the HTTP status the registry gives it', () => {
    const documented = [...errorsPage.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \| /gm)].map((match) => [match[1]!, Number(match[2])] as const);
    const codes = documented.map(([code]) => code);
    expect(new Set(codes).size).toBe(codes.length);
    expect([...codes].sort()).toEqual(Object.keys(errorCatalog).sort());
    for (const [code, status] of documented) expect(status, code).toBe(errorCatalog[code as ErrorCode].status);
  });

  it('gives every code a status the HTTP layer can send, on the error it builds, and a message that says what to do', () => {
    for (const [code, entry] of Object.entries(errorCatalog) as Array<[ErrorCode, (typeof errorCatalog)[ErrorCode]]>) {
      expect(code).toMatch(/^RAG_[A-Z_]+$/);
      expect(entry.status, code).toBeGreaterThanOrEqual(400);
      expect(entry.status, code).toBeLessThan(600);
      expect(new RagError(code).status, code).toBe(entry.status);
      expect(entry.message.length).toBeGreaterThan(10);
    }
  });

  it('wraps unknown errors as RAG_INTERNAL, keeping the cause for the logs only', () => {
    const cause = new Error('secret internals');
    const wrapped = toRagError(cause);
    expect(wrapped.code).toBe('RAG_INTERNAL');
    expect(wrapped.status).toBe(500);
    expect(wrapped.message).not.toContain('secret internals');
    expect(wrapped.cause).toBe(cause);
  });

  it('keeps a RagError as it is and appends the detail to the message', () => {
    const error = new RagError('RAG_INVALID_K', 'Got 0.');
    expect(toRagError(error)).toBe(error);
    expect(error.message).toBe('"k" must be an integer between 1 and 50. Got 0.');
  });
});
