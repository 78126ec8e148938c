import pino, { type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { traceLogFields } from './tracing/log-correlation.ts';

export type { Logger };

/** LOG_FORMAT: `auto` is human-readable on a terminal and JSON lines everywhere else (containers, pipes, files). */
export type LogFormat = 'auto' | 'json' | 'pretty';

export interface LoggerOptions {
  /** Default `auto`, as LOG_FORMAT's default. */
  format?: LogFormat;
  /** Whether the destination is a terminal; default: whether stderr is one. */
  isTerminal?: boolean;
  /** A file descriptor or a file path; default 2 (stderr). */
  destination?: number | string;
}

const REDACTED_PATHS = ['*.apiKey', '*.authorization', 'headers.authorization'];

/** The format actually written: `auto` resolves to pretty on a terminal only, so log collectors always get JSON. */
export function resolveLogFormat(format: LogFormat, isTerminal: boolean): 'json' | 'pretty' {
  if (format === 'auto') return isTerminal ? 'pretty' : 'json';
  return format;
}

/**
 * Logs on stderr, so that stdout stays free for a command's own output (the ingest summary line).
 * Pretty lines are formatted in-process by pino-pretty's formatter, not by a pino transport: a transport is a
 * worker thread that loads its module by name at runtime, which the esbuild bundle cannot resolve. Formatting
 * synchronously into the same destination as JSON also keeps the last line before process.exit (a fatal
 * startup error), which pino-pretty's own asynchronous stream could drop.
 */
export function createLogger(level: string, options: LoggerOptions = {}): Logger {
  const destination = options.destination ?? 2;
  const isTerminal = options.isTerminal ?? (destination === 2 && process.stderr.isTTY === true);
  const format = resolveLogFormat(options.format ?? 'auto', isTerminal);
  // A file is opened synchronously, so that nothing written before the open completes can be lost or
  // raced by a reader; stderr keeps pino's asynchronous writes, flushed on exit.
  const sink = pino.destination({ dest: destination, sync: typeof destination === 'string' });
  const loggerOptions = { level, redact: REDACTED_PATHS, mixin: traceLogFields };
  if (format === 'json' || level === 'silent') return pino(loggerOptions, sink);
  const prettify = prettyFactory({ colorize: isTerminal, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  const prettyStream = {
    write: (line: string) => sink.write(prettify(line)),
    flush: (callback?: (error?: Error) => void) => sink.flush(callback),
  };
  return pino(loggerOptions, prettyStream);
}
