/**
 * The one way the HTTP adapters (TEI, the LLM gateway, docling-serve) call a remote service:
 * a deadline, bounded retries with jittered backoff, and a single classification of every
 * failure into the error registry, so an adapter never has to guess what a TypeError means.
 *
 * - The deadline (`timeoutMs`) covers the whole call, retries and backoff included: it is
 *   the time a user waits, which is what RAG_*_TIMEOUT promises.
 * - Retried: 429, 502, 503 and network failures (refused, reset, DNS). Never retried: a
 *   caller abort, a timeout, any other status: repeating them would only repeat the failure.
 * - Detail strings name the host and the status or reason, never headers (where keys live).
 * - Answers are read up to a limit per dependency (MAX_BODY_BYTES): a larger one is a bad response.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pRetry, { AbortError } from 'p-retry';
import { RagError, type ErrorCode } from '../errors.ts';
import { BodyTooLargeError, boundedStream, readBoundedText } from './bounded-body.ts';
import { httpDispatcher } from './http-dispatcher.ts';

export type Dependency = 'embed' | 'rerank' | 'gateway' | 'store' | 'converter';

export interface RemoteCallOptions {
  dependency: Dependency;
  url: string;
  method?: string;
  headers?: Record<string, string>;
  /** Sent as JSON when present. */
  body?: unknown;
  /** Deadline for the whole call, retries included. */
  timeoutMs: number;
  /** Retries after the first attempt (default 2). */
  retries?: number;
  /** The caller's signal: aborting it ends the call with RAG_CLIENT_CLOSED, never retried. */
  signal?: AbortSignal;
  /** Gives a dependency-specific meaning to an error status (TEI's batch limit); undefined keeps the default. */
  classifyStatus?: (failure: HttpStatusError) => RagError | undefined;
  /** First backoff delay in ms (default 250); doubles on each retry, randomised ×1–2. */
  minBackoffMs?: number;
  /** Most bytes read from the answer (a stream: all of it); default MAX_BODY_BYTES of the dependency. */
  maxBodyBytes?: number;
}

const RETRYABLE_STATUSES = new Set([429, 502, 503]);
const MAX_BACKOFF_MS = 4_000;
/** We wait what Retry-After asks, but no longer than this: past it the deadline is the better judge. */
const MAX_RETRY_AFTER_MS = 10_000;
const MAX_DETAIL_CHARS = 200;
/** Of an error answer only a line is shown: the rest is not read. */
export const MAX_ERROR_BODY_BYTES = 64_000;

/**
 * Most bytes read from one answer; past it the call fails as a bad response (RAG_*_UNAVAILABLE)
 * instead of filling memory. Sized well above real answers: 32 embeddings of 4,096 floats are about
 * 2 MB of JSON, a rerank of 1,000 candidates about 50 KB, a long completion (or its whole stream) a
 * few hundred KB, docling's Markdown of a 1,000-page PDF a few MB. The Qdrant client reads its own
 * answers, which our requests keep small (pages of 512 points, a few payload fields).
 */
export const MAX_BODY_BYTES: Record<Dependency, number> = {
  embed: 64_000_000,
  rerank: 8_000_000,
  gateway: 16_000_000,
  store: 32_000_000,
  converter: 64_000_000,
};

const errorCodes: Record<Dependency, { unavailable: ErrorCode; timeout: ErrorCode }> = {
  embed: { unavailable: 'RAG_EMBED_UNAVAILABLE', timeout: 'RAG_EMBED_TIMEOUT' },
  rerank: { unavailable: 'RAG_RERANK_UNAVAILABLE', timeout: 'RAG_RERANK_TIMEOUT' },
  gateway: { unavailable: 'RAG_GATEWAY_UNAVAILABLE', timeout: 'RAG_GATEWAY_TIMEOUT' },
  store: { unavailable: 'RAG_STORE_UNAVAILABLE', timeout: 'RAG_STORE_TIMEOUT' },
  // The registry has no converter timeout: a converter that does not answer is unavailable.
  converter: { unavailable: 'RAG_CONVERTER_UNAVAILABLE', timeout: 'RAG_CONVERTER_UNAVAILABLE' },
};

/** A non-2xx answer, kept as the `cause` of the RagError it becomes. */
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    /** The server's own error message when its body has one (TEI, OpenAI, Qdrant shapes), else the raw body. */
    readonly serverMessage: string,
    readonly retryAfterMs: number | undefined,
  ) {
    super(`HTTP ${status}${serverMessage ? `: ${serverMessage}` : ''}`);
    this.name = 'HttpStatusError';
  }
}

/** A 2xx answer whose body is not the JSON it should be. */
export class InvalidResponseError extends Error {
  override name = 'InvalidResponseError';
}

/** Calls a JSON API and returns its parsed answer, or throws a classified RagError. */
export async function callJson<T>(options: RemoteCallOptions): Promise<T> {
  const deadline = deadlineFor(options);
  try {
    const response = await fetchWithRetries(options, deadline);
    return await readJson<T>(response, maxBodyBytesOf(options));
  } catch (error) {
    throw classifyFailure(options, error);
  }
}

/** Calls an endpoint for its status alone (health probes): any 2xx passes and the body is discarded. */
export async function callStatus(options: RemoteCallOptions): Promise<void> {
  const deadline = deadlineFor(options);
  try {
    const response = await fetchWithRetries(options, deadline);
    await response.body?.cancel();
  } catch (error) {
    throw classifyFailure(options, error);
  }
}

/**
 * Opens a streaming call (SSE): retries apply until the answer's status is known; the deadline
 * and the caller's signal keep applying while the body is read, and a read that fails throws
 * an already classified RagError.
 */
export async function callStream(options: RemoteCallOptions): Promise<Response> {
  const deadline = deadlineFor(options);
  try {
    const response = await fetchWithRetries(options, deadline);
    if (!response.body) throw new InvalidResponseError('the answer has no body');
    const body = classifyingStream(boundedStream(response.body, maxBodyBytesOf(options)), (error) => classifyFailure(options, error));
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  } catch (error) {
    throw classifyFailure(options, error);
  }
}

/** Joins a base URL (with or without a trailing slash or path) and an API path. */
export function endpoint(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

/** Where a dependency lives, for error details: scheme and host only, never credentials or query. */
export function describeEndpoint(url: string): string {
  try {
    const { protocol, host } = new URL(url);
    return `${protocol}//${host}`;
  } catch {
    return 'an invalid URL';
  }
}

export function bearer(apiKey: string | undefined): Record<string, string> {
  return apiKey ? { authorization: `Bearer ${apiKey}` } : {};
}

export interface RetryPolicy {
  retries: number;
  signal?: AbortSignal | undefined;
  minBackoffMs?: number | undefined;
  isRetryable: (error: unknown) => boolean;
  retryAfterMs?: (error: unknown) => number | undefined;
}

/** The retry loop shared by every remote call (fetch here, the Qdrant client in stores/qdrant.ts). */
export function withRetries<T>(attempt: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  return pRetry(
    async () => {
      try {
        return await attempt();
      } catch (error) {
        // p-retry's AbortError means "stop now" and rethrows the original error.
        throw policy.isRetryable(error) ? asError(error) : new AbortError(asError(error));
      }
    },
    {
      retries: policy.retries,
      minTimeout: policy.minBackoffMs ?? 250,
      maxTimeout: MAX_BACKOFF_MS,
      factor: 2,
      randomize: true,
      signal: policy.signal,
      onFailedAttempt: async (error) => {
        const waitMs = policy.retryAfterMs?.(error);
        if (waitMs && error.retriesLeft > 0) await sleep(Math.min(waitMs, MAX_RETRY_AFTER_MS), undefined, { signal: policy.signal });
      },
    },
  );
}

/** Network failures: what fetch reports as a TypeError (ECONNREFUSED, ECONNRESET, DNS), never an abort. */
export function isNetworkError(error: unknown): boolean {
  return error instanceof TypeError;
}

/** 429, 502, 503 and network failures may pass if tried again; nothing else will. */
export function isRetryableFailure(error: unknown): boolean {
  return isNetworkError(error) || (error instanceof HttpStatusError && RETRYABLE_STATUSES.has(error.status));
}

export function retryAfterMs(error: unknown): number | undefined {
  return error instanceof HttpStatusError ? error.retryAfterMs : undefined;
}

/** A deadline that passed, for clients that report timeouts their own way (the Qdrant client). */
export function timeoutError(cause: unknown): Error {
  const error = new Error('the deadline passed', { cause });
  error.name = 'TimeoutError';
  return error;
}

/** Turns any failure of a call into the registry's error for that dependency. */
export function classifyFailure(options: RemoteCallOptions, error: unknown): RagError {
  if (error instanceof RagError) return error;
  const codes = errorCodes[options.dependency];
  const where = describeEndpoint(options.url);
  if (options.signal?.aborted) return new RagError('RAG_CLIENT_CLOSED', undefined, { cause: error });
  if (isTimeout(error)) {
    return new RagError(codes.timeout, `(${where} did not answer within ${options.timeoutMs} ms)`, { cause: error });
  }
  if (error instanceof HttpStatusError) {
    const special = options.classifyStatus?.(error);
    if (special) return special;
    // A proxy's 504 (Envoy: "upstream request timeout") is a timeout behind it, not an outage.
    const code = error.status === 504 ? codes.timeout : codes.unavailable;
    return new RagError(code, `(${where} answered ${redact(error.message, options.headers)})`, { cause: error });
  }
  if (error instanceof InvalidResponseError || error instanceof BodyTooLargeError) {
    return new RagError(codes.unavailable, `(${where} answered with ${error.message})`, { cause: error });
  }
  return new RagError(codes.unavailable, `(${where} is unreachable: ${networkReason(error)})`, { cause: error });
}

export function maxBodyBytesOf(options: Pick<RemoteCallOptions, 'dependency' | 'maxBodyBytes'>): number {
  return options.maxBodyBytes ?? MAX_BODY_BYTES[options.dependency];
}

/** The call's deadline (timeoutMs, retries included), ended early by the caller's signal. */
export function deadlineFor(options: Pick<RemoteCallOptions, 'timeoutMs' | 'signal'>): AbortSignal {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  return options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
}

function fetchWithRetries(options: RemoteCallOptions, deadline: AbortSignal): Promise<Response> {
  return withRetries(() => fetchOnce(options, deadline), {
    retries: options.retries ?? 2,
    signal: deadline,
    minBackoffMs: options.minBackoffMs,
    isRetryable: (error) => !deadline.aborted && isRetryableFailure(error),
    retryAfterMs,
  });
}

async function fetchOnce(options: RemoteCallOptions, signal: AbortSignal): Promise<Response> {
  const hasBody = options.body !== undefined;
  const response = await fetch(options.url, {
    method: options.method ?? (hasBody ? 'POST' : 'GET'),
    headers: { accept: 'application/json', ...(hasBody ? { 'content-type': 'application/json' } : {}), ...options.headers },
    body: hasBody ? JSON.stringify(options.body) : null,
    signal,
    dispatcher: httpDispatcher,
  });
  if (response.ok) return response;
  throw await statusError(response);
}

async function statusError(response: Response): Promise<HttpStatusError> {
  const text = await readBoundedText(response, MAX_ERROR_BODY_BYTES, 'truncate').catch(() => '');
  return new HttpStatusError(response.status, serverMessage(text), parseRetryAfter(response.headers.get('retry-after')));
}

async function readJson<T>(response: Response, maxBytes: number): Promise<T> {
  const text = await readBoundedText(response, maxBytes);
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new InvalidResponseError(`invalid JSON (${text.length} bytes)`, { cause: error });
  }
}

/**
 * The error text of the shapes our dependencies use: TEI `{error, error_type}`, TEI's OpenAI
 * routes `{message, code, type}`, OpenAI/vLLM `{error: {message}}`, Qdrant `{status: {error}}`.
 */
function serverMessage(body: string): string {
  let text = body;
  try {
    const parsed: unknown = JSON.parse(body);
    text = pickMessage(parsed) ?? body;
  } catch {
    // not JSON: keep the raw text (Envoy answers plain text)
  }
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > MAX_DETAIL_CHARS ? `${oneLine.slice(0, MAX_DETAIL_CHARS)}…` : oneLine;
}

function pickMessage(parsed: unknown): string | undefined {
  if (!isRecord(parsed)) return undefined;
  const { error, message, status } = parsed;
  if (typeof error === 'string') return error;
  if (isRecord(error) && typeof error.message === 'string') return error.message;
  if (typeof message === 'string') return message;
  if (isRecord(status) && typeof status.error === 'string') return status.error;
  return undefined;
}

/** Retry-After is either delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** AbortSignal.timeout aborts with a TimeoutError; a backoff sleep cut by it throws an AbortError caused by one. */
function isTimeout(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return error.name === 'TimeoutError' || (error.name === 'AbortError' && isTimeout(error.cause));
}

function networkReason(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  if (isRecord(cause) && typeof cause.code === 'string') return cause.code;
  if (cause instanceof Error) return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** Belt and braces: a server that echoes a header back must not put a key into our logs. */
function redact(text: string, headers: Record<string, string> | undefined): string {
  let safe = text;
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!/authorization|api-key|token|secret/i.test(name)) continue;
    const secret = value.replace(/^Bearer\s+/i, '');
    if (secret.length >= 8) safe = safe.split(secret).join('[redacted]');
  }
  return safe;
}

/** Re-emits a body, turning a failed read (timeout, abort, reset) into the classified RagError. */
function classifyingStream(body: ReadableStream<Uint8Array>, classify: (error: unknown) => RagError): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        controller.error(classify(error));
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
