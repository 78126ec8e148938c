/**
 * `pnpm llm:serve NAME [--port P] [--threads N] [--host H]`: a local OpenAI-compatible server (llama.cpp's
 * llama-server) for a model `pnpm models:fetch` put under .cache/models/, on 127.0.0.1:8080 by default.
 * It says when /health answers (the model is loaded) and which variables point the suite at it, the random key of
 * this start among them (the server answers nothing else without it); SIGTERM or
 * SIGINT stops the server (it finishes cleaning up) and this command exits with the server's code.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_PORT, DEFAULT_THREADS, readyMessage, SERVABLE, startLlamaServer, unservableReason } from './llm/llama-server.ts';

const USAGE = `Usage: pnpm llm:serve NAME [--port ${DEFAULT_PORT}] [--threads ${DEFAULT_THREADS}] [--host 127.0.0.1]

NAME (fetched by pnpm models:fetch):
${Object.entries(SERVABLE).map(([name, { about }]) => `  ${name.padEnd(28)} ${about}`).join('\n')}`;

function positiveInteger(value: string | undefined, option: string, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number < min || number > 65535) throw new Error(`${option} expects an integer, got "${value}"`);
  return number;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { port: { type: 'string' }, threads: { type: 'string' }, host: { type: 'string' }, help: { type: 'boolean' } } });
  const [name] = positionals;
  if (values.help || name === undefined || positionals.length > 1) {
    process.stderr.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const reason = unservableReason(name);
  if (reason) {
    process.stderr.write(`llm:serve: ${reason}\n\n${USAGE}\n`);
    return 2;
  }
  const port = positiveInteger(values.port, '--port', DEFAULT_PORT, 0);
  const threads = positiveInteger(values.threads, '--threads', DEFAULT_THREADS);
  process.stderr.write(`llm:serve: starting ${name} with ${threads} thread(s)…\n`);
  const server = await startLlamaServer(name, { port, threads, host: values.host });
  process.stdout.write(readyMessage(name, server.url, server.apiKey));
  const stopped = new Promise<number>((resolve) => server.child.once('exit', (code) => resolve(code ?? 1)));
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      process.stderr.write(`llm:serve: ${signal}: stopping ${name}\n`);
      void server.stop();
    });
  }
  return stopped;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`llm:serve: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
