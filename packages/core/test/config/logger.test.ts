import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger, resolveLogFormat, type LoggerOptions } from '../../src/logger.ts';

let folder: string;
let files = 0;
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rag-logger-'));
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** Logs one info line with a secret header through a logger writing to a file, and returns what the file holds. */
async function logOneLine(options: LoggerOptions): Promise<string> {
  const destination = join(folder, `${++files}.log`);
  const logger = createLogger('info', { ...options, destination });
  logger.info({ files: 3, headers: { authorization: 'Bearer s3cret' } }, 'indexed the folder');
  await new Promise<void>((resolve, reject) => logger.flush((error) => (error ? reject(error) : resolve())));
  return readFile(destination, 'utf8');
}

describe('resolveLogFormat', () => {
  it.each([
    ['auto', true, 'pretty'],
    ['auto', false, 'json'],
    ['json', true, 'json'],
    ['json', false, 'json'],
    ['pretty', true, 'pretty'],
    ['pretty', false, 'pretty'],
  ] as const)('%s with a terminal %s writes %s', (format, isTerminal, expected) => {
    expect(resolveLogFormat(format, isTerminal)).toBe(expected);
  });
});

describe('createLogger', () => {
  it('writes a human-readable line with LOG_FORMAT=pretty', async () => {
    const output = await logOneLine({ format: 'pretty', isTerminal: false });
    const firstLine = output.split('\n')[0]!;
    expect(firstLine).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: indexed the folder$/);
    expect(() => JSON.parse(firstLine)).toThrow();
    expect(output).toContain('files: 3');
    expect(output).not.toContain('\u001b['); // no colours in a file
  });

  it('writes one JSON object per line with LOG_FORMAT=json', async () => {
    const output = await logOneLine({ format: 'json', isTerminal: true });
    const lines = output.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 30, msg: 'indexed the folder', files: 3 });
  });

  it('writes JSON in a pipe and pretty, coloured lines on a terminal when LOG_FORMAT=auto', async () => {
    const piped = await logOneLine({ format: 'auto', isTerminal: false });
    expect(JSON.parse(piped)).toMatchObject({ msg: 'indexed the folder' });
    const onTerminal = await logOneLine({ format: 'auto', isTerminal: true });
    expect(onTerminal).toContain('\u001b[');
    // eslint-disable-next-line no-control-regex
    expect(onTerminal.replace(/\u001b\[[0-9;]*m/g, '')).toContain('INFO: indexed the folder');
  });

  it.each(['json', 'pretty'] as const)('redacts authorization headers in %s', async (format) => {
    const output = await logOneLine({ format, isTerminal: false });
    expect(output).not.toContain('s3cret');
    expect(output).toContain('[Redacted]');
  });

  it('still takes the level alone', () => {
    expect(createLogger('warn').level).toBe('warn');
    expect(createLogger('silent').level).toBe('silent');
  });
});
