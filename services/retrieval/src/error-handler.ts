import type { Socket } from 'node:net';
import { errorCatalog, isRagError, RagError, type ErrorCode } from '@rag/core';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';

/** Fastify's own request errors, mapped to our stable codes. */
const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'RAG_INVALID_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'RAG_EMPTY_BODY',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'RAG_UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_BODY_TOO_LARGE: 'RAG_PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'RAG_INVALID_REQUEST',
  FST_ERR_BAD_URL: 'RAG_BAD_URL',
};

export function toHttpError(error: unknown): RagError {
  if (isRagError(error)) return error;
  const { code = '', statusCode } = error as Partial<FastifyError>;
  const ragCode = fastifyCodes[code];
  if (ragCode) return new RagError(ragCode);
  if (error instanceof SyntaxError) return new RagError('RAG_INVALID_JSON');
  // Any other request error of Fastify's (its codes are FST_ERR_*) is the client's, not ours.
  if (code.startsWith('FST_ERR_') && statusCode !== undefined && statusCode >= 400 && statusCode < 500) {
    return new RagError('RAG_INVALID_REQUEST', undefined, { cause: error });
  }
  return new RagError('RAG_INTERNAL', undefined, { cause: error });
}

/**
 * What a client is told of an error. A dependency's failure (503, 504) is told by its code's message, which
 * names the dependency ("The embedding server is unreachable or failing…"); the occurrence's detail (the
 * endpoint, the dependency's own error text) is for the log line logRequestError writes, never the client.
 */
export function clientMessage(error: RagError): string {
  return error.status === 503 || error.status === 504 ? errorCatalog[error.code].message : error.message;
}

export function errorBody(error: RagError): { error: { code: string; message: string } } {
  return { error: { code: error.code, message: clientMessage(error) } };
}

/** Logs a failed request by kind; client errors (4xx) are the client's business and are not logged. */
export function logRequestError(log: FastifyBaseLogger, httpError: RagError): void {
  // A dependency outage is expected operations, not a bug: one warn line with the reason, no stack.
  if (httpError.status === 503 || httpError.status === 504) log.warn({ code: httpError.code, reason: httpError.message }, 'dependency unavailable');
  else if (httpError.status >= 500) log.error({ err: httpError.cause ?? httpError, code: httpError.code }, 'request failed');
}

function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const httpError = toHttpError(error);
  logRequestError(request.log, httpError);
  return reply.status(httpError.status).send(errorBody(httpError));
}

/** Errors Node's HTTP parser raises before Fastify sees a request: written on the socket, then it is closed. */
function clientErrorResponse(error: NodeJS.ErrnoException): RagError {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new RagError('RAG_REQUEST_TIMEOUT');
  if (error.code === 'HPE_HEADER_OVERFLOW') return new RagError('RAG_HEADERS_TOO_LARGE');
  return new RagError('RAG_MALFORMED_REQUEST');
}

/**
 * Fastify options for the errors that never reach setErrorHandler: a URL that cannot be decoded
 * (`GET /%`) and requests Node cannot parse. Both answer `{"error": {"code", "message"}}` too.
 */
export const frameworkErrorOptions = {
  frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => sendError(error, request, reply),
  clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket) {
    // A reset connection has no one to answer (Node's own rule).
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const httpError = clientErrorResponse(error);
    const body = JSON.stringify(errorBody(httpError));
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${httpError.status} ${STATUS_TEXT[httpError.status] ?? 'Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  },
} satisfies Pick<FastifyServerOptions, 'frameworkErrors' | 'clientErrorHandler'>;

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/** `/v1/:id`-style route patterns, matched against a request path to know which methods it takes. */
function routeMatcher(url: string): RegExp {
  const segments = url.split('/').map((segment) => {
    if (segment.startsWith(':')) return '[^/]+';
    if (segment === '*') return '.*';
    return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp(`^${segments.join('/')}$`);
}

/** The only place errors become HTTP responses; internals go to the log, never to the client. */
export function registerErrorHandlers(app: FastifyInstance): void {
  // Every route registered after this, with its methods: a known path asked with another method is a 405.
  const routes: Array<{ matches: RegExp; methods: Set<string> }> = [];
  app.addHook('onRoute', (route) => {
    const matches = routeMatcher(route.url);
    let entry = routes.find((known) => known.matches.source === matches.source);
    if (!entry) routes.push((entry = { matches, methods: new Set() }));
    for (const method of [route.method].flat()) entry.methods.add(method);
  });
  app.setErrorHandler(sendError);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const allowed = routes.filter((route) => route.matches.test(path)).flatMap((route) => [...route.methods]);
    if (allowed.length > 0) {
      const allow = [...new Set(allowed)].sort().join(', ');
      reply.header('allow', allow);
      return reply.status(405).send(errorBody(new RagError('RAG_METHOD_NOT_ALLOWED', `${request.method} ${path}: use ${allow}.`)));
    }
    return reply.status(404).send(errorBody(new RagError('RAG_NOT_FOUND', `${request.method} ${request.url} does not exist.`)));
  });
}
