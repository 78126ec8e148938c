import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackServer } from './loopback-server.ts';

/** One POST /v1/convert/file as docling-serve receives it: headers and the parsed multipart form. */
export interface ConvertRequest {
  path: string;
  headers: IncomingMessage['headers'];
  form: FormData;
}

export type DoclingAnswer = { status: number; body: unknown; headers?: Record<string, string> };

/**
 * docling-serve's synchronous file conversion (v1 API): multipart `files` plus option fields in,
 * `{document: {md_content}, status, errors, processing_time}` out.
 * https://github.com/docling-project/docling-serve/blob/main/docs/usage.md
 */
export class FakeDoclingServer extends LoopbackServer {
  readonly requests: ConvertRequest[] = [];

  constructor(private readonly answer: (request: ConvertRequest, attempt: number) => DoclingAnswer) {
    super();
  }

  protected override async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const parts: Buffer[] = [];
    for await (const part of request) parts.push(part as Buffer);
    if (request.method !== 'POST' || request.url !== '/v1/convert/file') {
      return send(response, { status: 404, body: { detail: 'Not Found' } });
    }
    // undici parses multipart bodies the way a server framework would.
    const form = await new Response(Buffer.concat(parts), { headers: { 'content-type': request.headers['content-type'] ?? '' } }).formData();
    const convert = { path: request.url, headers: request.headers, form };
    this.requests.push(convert);
    send(response, this.answer(convert, this.requests.length));
  }
}

function send(response: ServerResponse, answer: DoclingAnswer): void {
  response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
  response.end(JSON.stringify(answer.body));
}

export function converted(markdown: string): DoclingAnswer {
  return { status: 200, body: { document: { filename: 'x', md_content: markdown }, status: 'success', errors: [], processing_time: 0.4, timings: {} } };
}
