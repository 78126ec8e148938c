import { expect } from 'vitest';
import { RagError } from '../../src/errors.ts';

/** Awaits a promise that must reject with a RagError, and returns that error for its code and message. */
export async function failure(promise: Promise<unknown>): Promise<RagError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RagError);
  return error as RagError;
}
