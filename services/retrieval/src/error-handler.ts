import { isRagError, RagError, type ErrorCode } from '@rag/core';
import type { FastifyBaseLogger, FastifyError, FastifyInstance } from 'fastify';

/** Fastify's own request errors, mapped to our stable codes. */
const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'RAG_INVALID_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'RAG_EMPTY_BODY',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'RAG_UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_BODY_TOO_LARGE: 'RAG_PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'RAG_INVALID_REQUEST',
};

export function toHttpError(error: unknown): RagError {
  if (isRagError(error)) return error;
  const code = fastifyCodes[(error as FastifyError).code ?? ''];
  if (code) return new RagError(code);
  if (error instanceof SyntaxError) return new RagError('RAG_INVALID_JSON');
  return new RagError('RAG_INTERNAL', undefined, { cause: error });
}

export function errorBody(error: RagError): { error: { code: string; message: string } } {
  return { error: { code: error.code, message: error.message } };
}

/** Logs a failed request by kind; client errors (4xx) are the client's business and are not logged. */
export function logRequestError(log: FastifyBaseLogger, httpError: RagError): void {
  // A dependency outage is expected operations, not a bug: one warn line with the reason, no stack.
  if (httpError.status === 503 || httpError.status === 504) log.warn({ code: httpError.code, reason: httpError.message }, 'dependency unavailable');
  else if (httpError.status >= 500) log.error({ err: httpError.cause ?? httpError, code: httpError.code }, 'request failed');
}

/** The only place errors become HTTP responses; internals go to the log, never to the client. */
export function registerErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const httpError = toHttpError(error);
    logRequestError(request.log, httpError);
    return reply.status(httpError.status).send(errorBody(httpError));
  });
  app.setNotFoundHandler((request, reply) => {
    return reply.status(404).send(errorBody(new RagError('RAG_NOT_FOUND', `${request.method} ${request.url} does not exist.`)));
  });
}
