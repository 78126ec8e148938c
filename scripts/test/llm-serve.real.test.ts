/**
 * `pnpm llm:serve NAME`: the real command with the small model (scripts/llm-serve.ts): it says when /health
 * answers and which variables to set, serves the OpenAI API under the model's name, and on SIGTERM stops
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
    expect(output).toContain(`GATEWAY_URL=${url} GATEWAY_MODEL=${NAME}`);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    const models = (await (await fetch(`${url}/v1/models`)).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((model) => model.id)).toEqual([NAME]);
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
