/**
 * RAG_AUTH_FILE: what a bad file says (never a hash), and the real server process reading it at start.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRagError } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RATE_LIMIT_PER_MINUTE, hashApiKey, loadApiKeys, parseApiKeys } from '../src/auth/api-keys.ts';

const repositoryRoot = new URL('../../../', import.meta.url).pathname;
const KEY = 'sk-test-0b7e41c2d9';
const HASH = hashApiKey(KEY);
const OTHER_HASH = hashApiKey('sk-other-77aa');

function problemOf(text: string): string {
  try {
    parseApiKeys(text, '/etc/rag/keys.yaml');
  } catch (error) {
    expect(isRagError(error) && error.code).toBe('RAG_CONFIG_INVALID');
    return (error as Error).message;
  }
  throw new Error('the file was accepted');
}

describe('parsing RAG_AUTH_FILE', () => {
  it('matches a presented key against its hash, with its groups and limit', () => {
    const keys = parseApiKeys(
      `keys:\n  - {name: support-bot, sha256: ${HASH.toUpperCase()}, groups: [support, ops], rate_limit_per_minute: 30}\n  - {name: web, sha256: ${OTHER_HASH}, groups: []}\n`,
      'keys.yaml',
    );
    expect(keys.match(KEY)).toEqual({ name: 'support-bot', groups: ['support', 'ops'] });
    expect(keys.match('sk-other-77aa')).toEqual({ name: 'web', groups: [] });
    expect(keys.match(`${KEY} `)).toBeUndefined();
    expect(keys.match(HASH)).toBeUndefined();
    expect(keys.limitOf('support-bot')).toBe(30);
    expect(keys.limitOf('web')).toBe(DEFAULT_RATE_LIMIT_PER_MINUTE);
  });

  it('hashes a key as `printf %s "$KEY" | sha256sum` does', () => {
    // sha256("password"), the hash of the example.
    expect(hashApiKey('password')).toBe('5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8');
  });

  it.each([
    ['the key itself instead of its hash', `keys:\n  - {name: bot, sha256: ${KEY}, groups: []}\n`, /keys\[0\] \(bot\)\.sha256: expected the 64 hexadecimal characters/, [KEY]],
    ['a missing groups list', `keys:\n  - {name: ok, sha256: ${OTHER_HASH}, groups: []}\n  - {name: bot, sha256: ${HASH}}\n`, /keys\[1\] \(bot\)\.groups: required/, [HASH]],
    ['a misspelt field', `keys:\n  - {name: bot, sha256: ${HASH}, groups: [], rate_limit: 5}\n`, /keys\[0\] \(bot\): Unrecognized key\(s\) in object: 'rate_limit'/, [HASH]],
    ['a zero rate limit', `keys:\n  - {name: bot, sha256: ${HASH}, groups: [], rate_limit_per_minute: 0}\n`, /keys\[0\] \(bot\)\.rate_limit_per_minute/, [HASH]],
    ['a name with a space', `keys:\n  - {name: support bot, sha256: ${HASH}, groups: []}\n`, /keys\[0\] \(support bot\)\.name: expected 1 to 64 letters/, [HASH]],
    ['two keys of one name', `keys:\n  - {name: bot, sha256: ${HASH}, groups: []}\n  - {name: bot, sha256: ${OTHER_HASH}, groups: []}\n`, /keys\[1\] \(bot\): the name is already used by keys\[0\]/, [HASH, OTHER_HASH]],
    ['two keys of one hash', `keys:\n  - {name: a, sha256: ${HASH}, groups: []}\n  - {name: b, sha256: ${HASH}, groups: []}\n`, /keys\[1\] \(b\): the same sha256 as keys\[0\] \(a\)/, [HASH]],
    ['no keys', 'keys: []\n', /keys: list at least one key/, []],
    ['an empty file', '', /\(the file\): Expected object, received null/, []],
    ['broken YAML on a line holding a hash', `keys:\n  - name: bot\n    sha256: ${HASH}: [\n`, /is not valid YAML at line \d+, column \d+\.$/, [HASH]],
  ])('refuses %s, naming the key and the problem, never the hash', (_name, text, expected, secrets) => {
    const message = problemOf(text);
    expect(message).toMatch(expected);
    expect(message).toContain('RAG_AUTH_FILE /etc/rag/keys.yaml');
    for (const secret of secrets) expect(message).not.toContain(secret);
  });

  it('refuses a file it cannot read', async () => {
    await expect(loadApiKeys('/nonexistent/keys.yaml')).rejects.toThrow(/RAG_AUTH_FILE \/nonexistent\/keys\.yaml cannot be read \(ENOENT\)/);
  });
});

describe('the server process', () => {
  let folder: string;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'rag-auth-file-'));
  });

  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  /** Runs the real server until it prints its welcome line (then stops it) or exits. */
  async function startServer(env: Record<string, string>, whileListening?: (baseUrl: string) => Promise<void>) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'services/retrieval/src/server.ts'], {
      cwd: repositoryRoot,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: '0', LOG_LEVEL: 'info', LOG_FORMAT: 'json', RAG_DATA_DIR: folder, LANCEDB_LOG: 'error', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const listening = new Promise<string | undefined>((resolve) => {
      const onData = (data: Buffer) => {
        output += data.toString();
        const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1];
        if (port) resolve(`http://127.0.0.1:${port}`);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      void exited.then(() => resolve(undefined));
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    try {
      const baseUrl = await listening;
      if (baseUrl && whileListening) await whileListening(baseUrl);
      if (child.exitCode === null) child.kill('SIGTERM');
      const code = await exited;
      return { code, output, listened: baseUrl !== undefined };
    } finally {
      clearTimeout(timer);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }

  const WARNING = /RAG_AUTH_FILE is not set and HOST=0\.0\.0\.0 is reachable from other machines/;

  it('warns once at start when it listens beyond loopback without an auth file, naming the per-address limit, and says so in the banner', async () => {
    const { output, listened } = await startServer({ HOST: '0.0.0.0' });
    expect(listened).toBe(true);
    const warnings = output.split('\n').filter((line) => WARNING.test(line));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/"level":40/);
    expect(warnings[0]).toContain('Rate limit: 600 requests a minute per client address (RAG_RATE_LIMIT_PER_ADDRESS)');
    expect(output).toMatch(/^No API keys \(RAG_AUTH_FILE unset\): the API is open to every machine that reaches 0\.0\.0\.0:\d+, public documents only\. Rate limit: 600 requests a minute per client address/m);
  });

  it('says loudly when the open API has no limit at all (RAG_RATE_LIMIT_PER_ADDRESS=0)', async () => {
    const { output } = await startServer({ HOST: '0.0.0.0', RAG_RATE_LIMIT_PER_ADDRESS: '0' });
    expect(output.split('\n').filter((line) => WARNING.test(line) && line.includes('NO rate limit at all (RAG_RATE_LIMIT_PER_ADDRESS=0)'))).toHaveLength(1);
    expect(output).toMatch(/^No API keys .*NO rate limit at all/m);
  });

  it('limits each client address of the open API: past RAG_RATE_LIMIT_PER_ADDRESS a minute, 429 RAG_ADDRESS_RATE_LIMITED with Retry-After; probes are not counted', async () => {
    const statuses: number[] = [];
    let refused: { code?: string; retryAfter: string | null; limit: string | null } | undefined;
    await startServer({ HOST: '127.0.0.1', RAG_RATE_LIMIT_PER_ADDRESS: '3' }, async (baseUrl) => {
      for (let i = 0; i < 3; i++) expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
      for (let i = 0; i < 4; i++) {
        const response = await fetch(`${baseUrl}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'leave' }) });
        statuses.push(response.status);
        const body = (await response.json()) as { error?: { code?: string } };
        if (response.status === 429) refused = { code: body.error?.code, retryAfter: response.headers.get('retry-after'), limit: response.headers.get('x-ratelimit-limit') };
      }
    });
    expect(statuses.slice(0, 3).every((status) => status !== 429)).toBe(true);
    expect(statuses[3]).toBe(429);
    expect(refused).toMatchObject({ code: 'RAG_ADDRESS_RATE_LIMITED', limit: '3' });
    expect(Number(refused!.retryAfter)).toBeGreaterThan(0);
  });

  it('does not warn on loopback', async () => {
    const { output, listened } = await startServer({ HOST: '127.0.0.1' });
    expect(listened).toBe(true);
    expect(output).not.toMatch(/RAG_AUTH_FILE is not set/);
  });

  it('stops at start on a bad file: exit 2, RAG_CONFIG_INVALID naming the key, no hash', async () => {
    const file = join(folder, 'bad-keys.yaml');
    await writeFile(file, `keys:\n  - name: support-bot\n    sha256: ${HASH}\n    groups: [support]\n  - name: web\n    sha256: ${OTHER_HASH}\n    groups: web\n`);
    const { code, output, listened } = await startServer({ HOST: '0.0.0.0', RAG_AUTH_FILE: file });
    expect(listened).toBe(false);
    expect(code).toBe(2);
    expect(output).toContain('"code":"RAG_CONFIG_INVALID"');
    expect(output).toContain(`RAG_AUTH_FILE ${file} keys[1] (web).groups: Expected array, received string`);
    expect(output).not.toContain(HASH);
    expect(output).not.toContain(OTHER_HASH);
  });

  it('with a good file, asks /search for a key and answers the key, without warning', async () => {
    const file = join(folder, 'keys.yaml');
    await writeFile(file, `keys:\n  - name: support-bot\n    sha256: ${HASH}\n    groups: [support]\n`);
    const statuses: number[] = [];
    const { output, listened } = await startServer({ HOST: '0.0.0.0', RAG_AUTH_FILE: file }, async (baseUrl) => {
      for (const headers of [{}, { authorization: `Bearer ${KEY}` }] as Array<Record<string, string>>) {
        const response = await fetch(`${baseUrl}/search`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{"query":"anything"}' });
        statuses.push(response.status);
        await response.arrayBuffer();
      }
    });
    expect(listened).toBe(true);
    // 401 without the key; with it, past authentication (200, or 503 on this empty, never-indexed folder).
    expect(statuses[0]).toBe(401);
    expect([200, 503]).toContain(statuses[1]);
    expect(output).toMatch(/API keys loaded from .*keys\.yaml/);
    expect(output).toContain("-H 'authorization: Bearer YOUR_KEY'");
    expect(output).not.toMatch(WARNING);
    expect(output).not.toContain(HASH);
    expect(output).not.toContain(KEY);
  });
});
