import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorsPageRows } from '../../src/errors-page.ts';
import { errorCatalog, RagError, toRagError } from '../../src/errors.ts';

const errorsPage = readFileSync(new URL('../../../../docs/errors.md', import.meta.url), 'utf8');

describe('the error registry', () => {
  it.each(errorsPageRows())('docs/errors.md has the row %s (run pnpm docs:errors after changing the registry)', (row) => {
    expect(errorsPage).toContain(row);
  });

  it('uses one HTTP status per code and a message that says what to do', () => {
    for (const [code, entry] of Object.entries(errorCatalog)) {
      expect(code).toMatch(/^RAG_[A-Z_]+$/);
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
