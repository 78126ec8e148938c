/**
 * llama.cpp's llama-server over a model fetched by `pnpm models:fetch`: the arguments, the start, the
 * readiness wait and the stop. `pnpm llm:serve` (llm-serve.ts), the real tests, the answer evaluation and
 * the benchmarks all start it from here.
 *
 * The server is llama.cpp's, run in-process by xllamacpp (scripts/llm/llama_server.py, which takes the
 * llama-server arguments below). Upstream facts (llama.cpp tools/server/README.md and tools/server/server.cpp,
 * checked against the fetched xllamacpp 2026.10.11549):
 *   - GET /health answers 503 {"error":{"message":"Loading model",…}} while the model loads, then 200 {"status":"ok"};
 *     the HTTP server starts before the model loads, and it is public (no API key check).
 *   - `--api-key KEY` (env: LLAMA_API_KEY): "API key to use for authentication" (tools/server/README.md, Server-specific
 *     params): every route but /health then answers 401 {"error":{"message":"Invalid API Key",…}} without
 *     `Authorization: Bearer KEY`. Each start gets a random key, passed in LLAMA_API_KEY (an argument would show in
 *     `ps` to every local user), so no other program and no web page can use the server (issue 43, finding 4).
 *   - CORS (README: `--cors-origins ORIGINS` "comma-separated list of allowed origins for CORS (default: *)",
 *     `--no-cors-credentials`): by default the server reflects any Origin with Access-Control-Allow-Credentials: true.
 *     It cannot be turned off; in xllamacpp 2026.10.11549 an origin list other than `*` or `localhost` is sent as is
 *     in Access-Control-Allow-Origin, so `--cors-origins none` (no page's origin: an origin is scheme://host[:port]
 *     or `null`) lets no page read an answer, and `--no-cors-credentials` sends Allow-Credentials: false. A page can
 *     still send a simple request (a text/plain POST needs no preflight): without the key it gets 401, unread.
 *   - OpenAI-compatible POST /v1/chat/completions (plain and streamed, `usage` in the last chunk with
 *     stream_options.include_usage), POST /v1/embeddings, GET /v1/models (the model id is --alias).
 *   - SIGINT and SIGTERM stop the server (llama_server.py: the task loop ends, the server cleans up, exit 0);
 *     a second signal exits 1 at once.
 *   - --port 0 binds a free port, logged as "listening on http://HOST:PORT".
 *   - --embedding restricts the server to embeddings; embeddings need all of a text's tokens in one ubatch,
 *     so -ub is at least the longest input (nomic-embed-text-v1.5 was trained on 2048-token inputs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
export const modelsDir = join(repositoryRoot, '.cache', 'models');

export type ServedKind = 'chat' | 'embedding';

interface Servable {
  kind: ServedKind;
  /** What the model is, for the help text. */
  about: string;
  /** Model-specific llama-server arguments. */
  args: string[];
}

/**
 * Chat models: an 8192-token context shared by the slots (kv-unified, llama-server's default with
 * --parallel auto), greedy decoding so that the same question gets the same answer, and a cap of 512
 * generated tokens so that a small model repeating itself stops. Embeddings: 4 slots of 2048 tokens.
 */
const CHAT_ARGS = ['-c', '8192', '--temp', '0', '-n', '512'];
/** SmolLM2-135M loops on a RAG prompt until the cap: a lower one keeps a test of it short (llama.cpp applies the last -n). */
const SMALL_CHAT_ARGS = [...CHAT_ARGS, '-n', '256'];
export const SERVABLE: Record<string, Servable> = {
  'qwen2.5-coder-1.5b-instruct': { kind: 'chat', about: 'Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.1 GB): answers with citations', args: CHAT_ARGS },
  'smollm2-135m-instruct': { kind: 'chat', about: 'SmolLM2-135M-Instruct Q4_1 (98 MB): fast, weak; cites rarely and invents', args: SMALL_CHAT_ARGS },
  'nomic-embed-text-v1.5': { kind: 'embedding', about: 'nomic-embed-text-v1.5 f16 (274 MB): 768-d embeddings; needs the search_query: / search_document: prefixes', args: ['--embedding', '-c', '8192', '-np', '4', '-b', '2048', '-ub', '2048'] },
};

export const DEFAULT_PORT = 8080;
/** The fewest threads that keep a CPU answer usable; set --threads to use more cores. */
export const DEFAULT_THREADS = 2;

export interface ServeOptions {
  host?: string;
  port?: number;
  threads?: number;
}

export function llamaServerBinary(): string {
  return join(modelsDir, 'llama-server', 'bin', 'llama-server');
}

export function modelFile(name: string): string {
  return join(modelsDir, name, 'model.gguf');
}

/** Why `name` cannot be served, or undefined when it can. */
export function unservableReason(name: string): string | undefined {
  if (!(name in SERVABLE)) return `unknown model "${name}": one of ${Object.keys(SERVABLE).join(', ')}`;
  if (!existsSync(llamaServerBinary())) return 'llama-server is not fetched (run pnpm models:fetch)';
  if (!existsSync(modelFile(name))) return `${name} is not fetched (run pnpm models:fetch)`;
  return undefined;
}

export function llamaServerArgs(name: string, options: ServeOptions = {}): string[] {
  const servable = SERVABLE[name];
  if (!servable) throw new Error(unservableReason(name));
  return [
    '-m', modelFile(name),
    '--alias', name,
    '--host', options.host ?? '127.0.0.1',
    '--port', String(options.port ?? DEFAULT_PORT),
    '-t', String(options.threads ?? DEFAULT_THREADS),
    '--no-webui',
    '--metrics',
    // No page may read an answer, nor send credentials (see the note at the top).
    '--cors-origins', 'none',
    '--no-cors-credentials',
    ...servable.args,
  ];
}

/** A new random key for one start: 256 bits, URL-safe, what `Authorization: Bearer` and the suite's *_API_KEY take. */
export function newApiKey(): string {
  return randomBytes(32).toString('base64url');
}

/** The variables that point the suite at a server of `name` at `url` with `apiKey`, in the order they are printed. */
export function variablesFor(name: string, url: string, apiKey: string): Array<[string, string]> {
  if (SERVABLE[name]?.kind === 'embedding') {
    return [['EMBED_URL', url], ['EMBED_MODEL', name], ['EMBED_API_KEY', apiKey], ['EMBED_QUERY_PREFIX', 'search_query: '], ['EMBED_PASSAGE_PREFIX', 'search_document: '], ['EMBED_BATCH_SIZE', '8'], ['EMBED_TIMEOUT_MS', '120000']];
  }
  return [['GATEWAY_URL', url], ['GATEWAY_MODEL', name], ['GATEWAY_API_KEY', apiKey]];
}

/** What `pnpm llm:serve` prints once the server answers: where it is, and the variables to set, its key among them (one shell line). */
export function readyMessage(name: string, url: string, apiKey: string): string {
  const variables = variablesFor(name, url, apiKey).map(([key, value]) => `${key}=${shellWord(value)}`).join(' ');
  return `llm:serve: ${name} ready on ${url}\n  ${variables}\n  (a new key at each start: every route but /health answers 401 without Authorization: Bearer <key>)\n`;
}

function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

/** The most of the server's log a launcher keeps: llama.cpp logs every request, and a server runs for hours. */
export const LOG_TAIL_CHARS = 64 * 1024;

/** The last `limit` characters of a log that arrives in pieces, in memory bounded by twice that whatever the log's length. */
export class LogTail {
  private kept = '';

  constructor(private readonly limit = LOG_TAIL_CHARS) {}

  append(piece: string): void {
    this.kept += piece;
    // Cut once past twice the limit, so that appending stays linear.
    if (this.kept.length > 2 * this.limit) this.kept = this.kept.slice(-this.limit);
  }

  text(): string {
    return this.kept.length > this.limit ? this.kept.slice(-this.limit) : this.kept;
  }

  /** How many characters it holds now: at most twice the limit. */
  get heldChars(): number {
    return this.kept.length;
  }
}

export interface RunningServer {
  name: string;
  /** http://HOST:PORT, what GATEWAY_URL or EMBED_URL takes. */
  url: string;
  /** This start's key, what GATEWAY_API_KEY or EMBED_API_KEY takes: every route but /health needs it as `Authorization: Bearer`. */
  apiKey: string;
  /** The variables that point the suite at this server (variablesFor). */
  variables: Record<string, string>;
  child: ChildProcess;
  /** The end of the server's log (stdout and standard error), at most LOG_TAIL_CHARS characters. */
  log(): string;
  /** SIGTERM, then the exit code; SIGKILL past `graceMs`. */
  stop(graceMs?: number): Promise<number | null>;
}

// Port 0 is never an address: xllamacpp's listening_address can be read before the listener has bound (llama_server.py's line).
const LISTENING = /listening on (http:\/\/[^\s]+:(?!0\s)\d+)\s/;

/**
 * The address the server's log says it listens on, once the line holding it is whole: the log arrives in
 * pieces, and one can end inside the address (`…:388` of `…:38887`), which would be a wrong port.
 */
export function listeningAddress(log: string): string | undefined {
  return LISTENING.exec(log)?.[1];
}

/** Starts llama-server and resolves once GET /health answers 200 (the model is loaded). */
export async function startLlamaServer(name: string, options: ServeOptions & { readyTimeoutMs?: number } = {}): Promise<RunningServer> {
  const reason = unservableReason(name);
  if (reason) throw new Error(reason);
  // A start whose /health never answered 200 (seen twice in about twenty starts here, cause not yet found; its log
  // is printed) is tried once more with the other half of the wait: loading takes seconds when it works.
  const attemptMs = (options.readyTimeoutMs ?? 300_000) / 2;
  try {
    return await startOnce(name, { ...options, readyTimeoutMs: attemptMs });
  } catch (error) {
    if (!(error instanceof NotHealthyError)) throw error;
    process.stderr.write(`llama-server ${name}: ${error.message}\nstarting it again\n`);
    return startOnce(name, { ...options, readyTimeoutMs: attemptMs });
  }
}

class NotHealthyError extends Error {}

async function startOnce(name: string, options: ServeOptions & { readyTimeoutMs: number }): Promise<RunningServer> {
  const apiKey = newApiKey();
  const child = spawn(llamaServerBinary(), llamaServerArgs(name, { port: 0, ...options }), {
    env: { ...process.env, LLAMA_API_KEY: apiKey },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // A process that exits without stopping it (an error, a signal it does not handle) must not leave the server behind.
  const stopOnExit = () => child.kill('SIGTERM');
  process.once('exit', stopOnExit);
  void once(child, 'exit').then(() => process.off('exit', stopOnExit));
  const log = new LogTail();
  // The address is looked for in the new piece with the end of the one before (a line can be cut between two pieces), not in the whole log.
  let pending = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const address = new Promise<string>((resolve, reject) => {
    let found = false;
    const onData = (data: Buffer) => {
      const piece = data.toString();
      log.append(piece);
      if (found) return;
      const url = listeningAddress(pending + piece);
      if (url) {
        found = true;
        pending = '';
        resolve(url);
      } else {
        pending = (pending + piece).slice(-1024);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => reject(new Error(`llama-server ${name} exited with ${code} before listening:\n${log.text().slice(-2000)}`)));
  });
  const stop = async (graceMs = 10_000) => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };
  let url: string | undefined;
  try {
    url = await address;
    await waitHealthy(url, options.readyTimeoutMs, exited);
    return { name, url, apiKey, variables: Object.fromEntries(variablesFor(name, url, apiKey)), child, log: () => log.text(), stop };
  } catch (error) {
    await stop(1_000);
    if (url === undefined) throw error;
    throw new NotHealthyError(`${(error as Error).message} at ${url}; its log ends:\n${log.text().slice(-2000)}`, { cause: error });
  }
}

async function waitHealthy(url: string, timeoutMs: number, exited: Promise<number | null>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void exited.then(() => (gone = true));
  while (!gone && Date.now() < deadline) {
    const status = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5_000) }).then((response) => response.status, () => 0);
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(gone ? 'llama-server exited while loading its model' : `llama-server was not healthy after ${timeoutMs} ms`);
}
