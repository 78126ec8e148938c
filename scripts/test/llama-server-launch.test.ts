/**
 * How scripts/llm/llama-server.ts starts llama-server (issue 43, finding 4): a random key per start, printed with the
 * variables that point the suite at the server, no credentialed CORS, and only a bounded tail of the server's log
 * kept in memory (llama.cpp logs every request; `log += …` grew for the server's whole life).
 */
import { describe, expect, it } from 'vitest';
import { llamaServerArgs, LOG_TAIL_CHARS, LogTail, newApiKey, readyMessage, variablesFor } from '../llm/llama-server.ts';

describe("llama-server's log, as the launcher keeps it", () => {
  it('keeps the last 64 KiB of characters whatever the log\'s length, the newest line last', () => {
    const tail = new LogTail();
    const line = (n: number) => `srv  log_server_r: request: POST /v1/chat/completions 127.0.0.1 200 #${n}\n`;
    let total = 0;
    for (let n = 0; n < 100_000; n++) {
      tail.append(line(n));
      total += line(n).length;
      expect(tail.heldChars).toBeLessThanOrEqual(2 * LOG_TAIL_CHARS);
    }
    expect(total).toBeGreaterThan(100 * LOG_TAIL_CHARS);
    expect(LOG_TAIL_CHARS).toBe(64 * 1024);
    expect(tail.text()).toHaveLength(LOG_TAIL_CHARS);
    expect(tail.text().endsWith(line(99_999))).toBe(true);
    expect(tail.text()).not.toContain(`#0\n`);
  });

  it('keeps a short log whole, and a piece larger than the limit as its end', () => {
    const tail = new LogTail(10);
    tail.append('abc');
    tail.append('def');
    expect(tail.text()).toBe('abcdef');
    tail.append('0123456789ABCDEFGHIJ0123456789');
    expect(tail.text()).toBe('0123456789');
    expect(tail.heldChars).toBeLessThanOrEqual(20);
  });
});

describe('the key of a start', () => {
  it('is new at each start: 256 random bits, URL-safe, so that it can be set in a shell and sent as a bearer token', () => {
    const keys = new Set(Array.from({ length: 100 }, () => newApiKey()));
    expect(keys.size).toBe(100);
    for (const key of keys) expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('is never an argument (any local user reads them in ps); CORS lets no page read an answer, nor send credentials', () => {
    const args = llamaServerArgs('qwen2.5-coder-1.5b-instruct', { port: 0 });
    expect(args.join(' ')).not.toMatch(/--api-key/);
    expect(args.slice(args.indexOf('--cors-origins'), args.indexOf('--cors-origins') + 2)).toEqual(['--cors-origins', 'none']);
    expect(args).toContain('--no-cors-credentials');
    expect(llamaServerArgs('nomic-embed-text-v1.5', { port: 0 })).toContain('--no-cors-credentials');
  });
});

describe('what pnpm llm:serve prints once the server answers', () => {
  const key = 'Zk3_9-abcdefghijklmnopqrstuvwxyzABCDEFGHIJK';

  it('gives a chat model\'s variables with the key: GATEWAY_URL, GATEWAY_MODEL, GATEWAY_API_KEY', () => {
    const message = readyMessage('qwen2.5-coder-1.5b-instruct', 'http://127.0.0.1:8080', key);
    expect(message).toContain('ready on http://127.0.0.1:8080');
    expect(message).toContain(`GATEWAY_URL=http://127.0.0.1:8080 GATEWAY_MODEL=qwen2.5-coder-1.5b-instruct GATEWAY_API_KEY=${key}\n`);
    expect(message).not.toContain('EMBED_');
  });

  it('gives an embedding model\'s variables with the key: EMBED_URL, EMBED_MODEL, EMBED_API_KEY and the prefixes, shell-quoted', () => {
    const message = readyMessage('nomic-embed-text-v1.5', 'http://127.0.0.1:8081', key);
    expect(message).toContain(`EMBED_URL=http://127.0.0.1:8081 EMBED_MODEL=nomic-embed-text-v1.5 EMBED_API_KEY=${key} EMBED_QUERY_PREFIX='search_query: ' EMBED_PASSAGE_PREFIX='search_document: ' EMBED_BATCH_SIZE=8 EMBED_TIMEOUT_MS=120000\n`);
    expect(message).not.toContain('GATEWAY_');
    expect(Object.fromEntries(variablesFor('nomic-embed-text-v1.5', 'http://h:1', key)).EMBED_API_KEY).toBe(key);
  });
});
