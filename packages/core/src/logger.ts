import pino, { type Logger } from 'pino';

export type { Logger };

/** JSON logs on stderr, so that stdout stays free for a command's own output (the ingest summary line). */
export function createLogger(level: string): Logger {
  return pino({ level, redact: ['*.apiKey', '*.authorization', 'headers.authorization'] }, pino.destination(2));
}
