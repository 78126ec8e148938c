/**
 * Reading a dependency's answer with a ceiling, so that a broken or hostile server (an endless body,
 * a gzip bomb: fetch inflates as it reads) fails the call instead of exhausting the process's memory.
 */

/** An answer past the limit; remote-call classifies it as a bad response, the dependency's *_UNAVAILABLE. */
export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';

  constructor(
    readonly limitBytes: number,
    declaredBytes?: number,
  ) {
    super(`${declaredBytes === undefined ? 'a body' : `a body of ${bytes(declaredBytes)}`} over the limit of ${bytes(limitBytes)}`);
  }
}

/**
 * The body as UTF-8 text, at most `maxBytes` of it: past that, `fail` cancels the download and throws
 * BodyTooLargeError; `truncate` keeps the first `maxBytes` (error bodies, of which a line is shown).
 */
export async function readBoundedText(response: Response, maxBytes: number, onOverflow: 'fail' | 'truncate' = 'fail'): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (onOverflow === 'fail' && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new BodyTooLargeError(maxBytes, declared);
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > maxBytes) {
      await reader.cancel().catch(() => {});
      if (onOverflow === 'fail') throw new BodyTooLargeError(maxBytes);
      chunks.push(value.subarray(0, maxBytes - size));
      break;
    }
    size += value.byteLength;
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Passes a body through, erroring it with BodyTooLargeError (and cancelling the source) once past `maxBytes`. */
export function boundedStream(body: ReadableStream<Uint8Array>, maxBytes: number): ReadableStream<Uint8Array> {
  let size = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size > maxBytes) controller.error(new BodyTooLargeError(maxBytes));
        else controller.enqueue(chunk);
      },
    }),
  );
}

function bytes(count: number): string {
  return `${count.toLocaleString('en-US')} bytes`;
}
