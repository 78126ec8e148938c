import type { FileHandle } from 'node:fs/promises';
import { pipeline, Transform, type TransformCallback } from 'node:stream';
import { RagError } from '@rag/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import parseRange from 'range-parser';

/** An open file as it was when stat'ed after opening: what is announced (Content-Length) and sent, and what must not change. */
export interface OpenedFile {
  file: FileHandle;
  size: number;
  mtimeMs: number;
}

/**
 * Sends an open file whole (200) or the one byte range asked for (206), per RFC 9110 §14
 * (https://www.rfc-editor.org/rfc/rfc9110#section-14): `Accept-Ranges: bytes` on every file answer; one satisfiable
 * range is a 206 with `Content-Range: bytes first-last/length`; none satisfiable is a 416 with `Content-Range: bytes *` then `/length`;
 * a malformed header, another unit, several ranges or an `If-Range` (no validator is sent, so none can match) are
 * ignored and the whole file is sent (§14.2: "A server MAY ignore the Range header field"). The handle is closed
 * once sent, or at once when nothing of it is.
 *
 * Exactly the announced bytes, never more (issue 43, finding 1: a file appended to while sent used to write past its
 * Content-Length, and the appended bytes were read as the next response on a kept-alive connection): the read stops
 * at the stat'ed size. A file whose size or modification time is no longer the stat'ed one is RAG_DOCUMENT_CHANGED
 * (409) before anything is sent. One that changes while it is sent: found short (it shrank), or rewritten in place
 * (same size, another modification time when its last bytes are due), has its connection destroyed instead of the
 * answer completed, so that the client sees a cut answer rather than a wrong one and never waits for bytes that will
 * not come. One that only grew (appended to) still holds the announced bytes: they are sent, the connection is kept.
 */
export async function sendFile(request: FastifyRequest, reply: FastifyReply, opened: OpenedFile): Promise<FastifyReply> {
  const { file, size } = opened;
  reply.header('accept-ranges', 'bytes');
  try {
    await assertUnchanged(opened);
  } catch (error) {
    await file.close();
    throw error;
  }
  const range = requestedRange(request, size);
  if (range === 'unsatisfiable') {
    await file.close();
    return reply.code(416).header('content-range', `bytes */${size}`).type('text/plain; charset=utf-8').send('Range Not Satisfiable');
  }
  if (size === 0) {
    // createReadStream cannot be asked for no bytes (end < start); an empty file is all headers.
    await file.close();
    return reply.header('content-length', 0).send('');
  }
  const { start, end } = range ?? { start: 0, end: size - 1 };
  if (range) reply.code(206).header('content-range', `bytes ${start}-${end}/${size}`);
  reply.header('content-length', end - start + 1);
  const read = file.createReadStream({ start, end, autoClose: false, emitClose: false });
  const exact = new ExactBytes(end - start + 1, opened);
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    void file.close().catch(() => undefined);
  };
  exact.once('close', close);
  // An error of either stream destroys the other; Fastify answers it (nothing sent yet) or destroys the socket.
  pipeline(read, exact, () => undefined);
  return reply.send(exact);
}

/** RAG_DOCUMENT_CHANGED when the open file's size or modification time is not the one stat'ed when it was opened. */
async function assertUnchanged(opened: OpenedFile): Promise<void> {
  const now = await opened.file.stat();
  if (now.size !== opened.size || now.mtimeMs !== opened.mtimeMs) throw changed('while it was opened');
}

function changed(when: string): RagError {
  return new RagError('RAG_DOCUMENT_CHANGED', `(it changed ${when})`);
}

/**
 * Passes on exactly `expected` bytes, holding the last chunk back until the file is stat'ed once more: a file found
 * short, smaller than it was, or the same size with another modification time fails the stream, which destroys the
 * connection (the headers are out by then).
 */
class ExactBytes extends Transform {
  private passed = 0;
  private held: Buffer | undefined;

  constructor(
    private readonly expected: number,
    private readonly opened: OpenedFile,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    // The read is bounded by `end`, so this never trims; it holds whatever a stream would bring past the size.
    const room = this.expected - this.passed;
    const piece = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.passed += piece.length;
    if (this.held) this.push(this.held);
    this.held = piece;
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.passed < this.expected) {
      callback(changed(`while it was sent: ${this.passed} of ${this.expected} bytes were there`));
      return;
    }
    this.opened.file.stat().then(
      (now) => {
        const appendedOnly = now.size > this.opened.size;
        if (now.size < this.opened.size || (!appendedOnly && now.mtimeMs !== this.opened.mtimeMs)) callback(changed('while it was sent'));
        else callback(null, this.held);
      },
      (error: unknown) => callback(error as Error),
    );
  }
}

function requestedRange(request: FastifyRequest, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  const header = request.headers.range;
  if (typeof header !== 'string' || request.headers['if-range'] !== undefined) return undefined;
  const ranges = parseRange(size, header, { combine: true });
  if (ranges === -1) return 'unsatisfiable';
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return undefined;
  return ranges[0];
}
