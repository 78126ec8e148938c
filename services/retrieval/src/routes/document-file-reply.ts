import type { FileHandle } from 'node:fs/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import parseRange from 'range-parser';

/**
 * Sends an open file whole (200) or the one byte range asked for (206), per RFC 9110 §14
 * (https://www.rfc-editor.org/rfc/rfc9110#section-14): `Accept-Ranges: bytes` on every file answer; one satisfiable
 * range is a 206 with `Content-Range: bytes first-last/length`; none satisfiable is a 416 with `Content-Range: bytes *` then `/length`;
 * a malformed header, another unit, several ranges or an `If-Range` (no validator is sent, so none can match) are
 * ignored and the whole file is sent (§14.2: "A server MAY ignore the Range header field"). The handle is closed
 * once sent, or at once when nothing of it is.
 */
export async function sendFile(request: FastifyRequest, reply: FastifyReply, file: FileHandle, size: number): Promise<FastifyReply> {
  reply.header('accept-ranges', 'bytes');
  const range = requestedRange(request, size);
  if (range === 'unsatisfiable') {
    await file.close();
    return reply.code(416).header('content-range', `bytes */${size}`).type('text/plain; charset=utf-8').send('Range Not Satisfiable');
  }
  if (!range) return reply.header('content-length', size).send(file.createReadStream());
  return reply
    .code(206)
    .header('content-range', `bytes ${range.start}-${range.end}/${size}`)
    .header('content-length', range.end - range.start + 1)
    .send(file.createReadStream({ start: range.start, end: range.end }));
}

function requestedRange(request: FastifyRequest, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  const header = request.headers.range;
  if (typeof header !== 'string' || request.headers['if-range'] !== undefined) return undefined;
  const ranges = parseRange(size, header, { combine: true });
  if (ranges === -1) return 'unsatisfiable';
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return undefined;
  return ranges[0];
}
