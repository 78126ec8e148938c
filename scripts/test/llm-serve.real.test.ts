/**
 * `pnpm llm:serve NAME`: the real command with the small model (scripts/llm-serve.ts): it says when /health
 * answers and which variables to set (this start's random key among them), serves the OpenAI API under the model's
 * name to a request with the key only (401 without it, and no CORS that lets a page read an answer), and on SIGTERM stops
 * llama-server and exits with its code (0: llama.cpp tools/server/server.cpp ends its loop and cleans up).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repositoryRoot, unservableReason } from '../llm/llama-server.ts';
import { realComponentSkipReason } from '../../packages/core/test/real/real-components.ts';

const NAME = 'smollm2-135m-instruct';
const skip = realComponentSkipReason('pnpm llm:serve', unservableReason(NAME));

describe.skipIf(skip)('pnpm llm:serve', () => {
  it('serves the model on the port it prints, under its name, and stops cleanly on SIGTERM', async () => {
    const child = spawn(join(repositoryRoot, 'node_modules/.bin/tsx'), ['scripts/llm-serve.ts', NAME, '--port', '0', '--threads', '1'], { cwd: repositoryRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (data: Buffer) => (output += data.toString()));
    child.stderr.on('data', (data: Buffer) => (output += data.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    while (!/ready on (http:\S+)/.test(output)) {
      if (child.exitCode !== null) throw new Error(`llm:serve exited early:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const url = /ready on (http:\S+)/.exec(output)![1]!;
    expect(output).toMatch(new RegExp(`GATEWAY_URL=${url} GATEWAY_MODEL=${NAME} GATEWAY_API_KEY=[A-Za-z0-9_-]{43}\n`));
    const key = /GATEWAY_API_KEY=(\S+)/.exec(output)![1]!;
    expect((await fetch(`${url}/health`)).status).toBe(200);
    const models = (await (await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((model) => model.id)).toEqual([NAME]);
    // Issue 43, finding 4: nothing but /health without the key, and no page may read an answer.
    expect((await fetch(`${url}/v1/models`)).status).toBe(401);
    expect((await fetch(`${url}/v1/models`, { headers: { authorization: 'Bearer not-the-key' } })).status).toBe(401);
    const page = 'https://attacker.example';
    // What a page can send without a preflight: a text/plain POST, with the browser's Origin.
    const simple = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { origin: page, 'content-type': 'text/plain' }, body: JSON.stringify({ messages: [{ role: 'user', content: 'Say hi.' }], max_tokens: 4 }) });
    expect(simple.status).toBe(401);
    expect(simple.headers.get('access-control-allow-origin')).not.toBe(page);
    expect(simple.headers.get('access-control-allow-credentials')).not.toBe('true');
    const preflight = await fetch(`${url}/v1/chat/completions`, { method: 'OPTIONS', headers: { origin: page, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });
    expect(preflight.headers.get('access-control-allow-origin')).not.toBe(page);
    expect(preflight.headers.get('access-control-allow-origin')).not.toBe('*');
    expect(preflight.headers.get('access-control-allow-credentials')).not.toBe('true');
    const answered = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ role: 'user', content: 'Say hi.' }], max_tokens: 4 }) });
    expect(answered.status).toBe(200);
    expect(((await answered.json()) as { choices: unknown[] }).choices).toHaveLength(1);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });

  it('refuses an unknown model name with the list of servable ones', async () => {
    const child = spawn(join(repositoryRoot, 'node_modules/.bin/tsx'), ['scripts/llm-serve.ts', 'gpt-5'], { cwd: repositoryRoot });
    let errors = '';
    child.stderr.on('data', (data: Buffer) => (errors += data.toString()));
    expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(2);
    expect(errors).toContain('unknown model "gpt-5"');
    expect(errors).toContain('qwen2.5-coder-1.5b-instruct');
  });
});
