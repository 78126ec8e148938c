import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startTestStack } from '../../services/retrieval/test/test-stack.ts';
import { expectedOutputs, runbookPath, withExpectedOutputs } from './runbook-outputs.ts';

describe('the runbook expected outputs', () => {
  const runbook = readFileSync(runbookPath, 'utf8');

  it('mark every computed output', () => {
    for (const name of Object.keys(expectedOutputs())) expect(runbook).toContain(`<!-- expected:${name} -->`);
  });

  it('are current (else run `pnpm docs:runbook`)', () => {
    expect(withExpectedOutputs(runbook)).toBe(runbook);
  });

  it('would notice a stale count (the check is not a no-op)', () => {
    const stale = runbook.replace(/<!-- expected:created -->\d+/, '<!-- expected:created -->30');
    expect(withExpectedOutputs(stale)).not.toBe(stale);
  });

  it('show /readyz as the API answers it', async () => {
    const stack = await startTestStack();
    try {
      const body = (await (await fetch(`${stack.baseUrl}/readyz`)).json()) as { status: string };
      expect(runbook).toContain(`\`{"status":"${body.status}",`);
    } finally {
      await stack.close();
    }
  });
});
