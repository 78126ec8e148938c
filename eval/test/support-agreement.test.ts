import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agreementAt, loadSupportSample, separation } from '../src/support-agreement.ts';

const sentences = [
  { supported: true, score: 0.9 },
  { supported: true, score: 0.6 },
  { supported: true, score: 0.5 },
  { supported: false, score: 0.7 },
  { supported: false, score: 0.2 },
];

describe('a support measure against a careful reading', () => {
  it('counts the supported sentences kept and the unsupported ones flagged at a threshold (worked by hand)', () => {
    // At 0.55: kept 0.9 and 0.6 of the supported (2 / 3); flagged 0.2 of the unsupported (1 / 2).
    expect(agreementAt(sentences, 0.55)).toEqual({ threshold: 0.55, supportedKept: 2, unsupportedFlagged: 1, supported: 3, unsupported: 2, balancedAccuracy: (2 / 3 + 1 / 2) / 2 });
    // A score equal to the threshold is kept, as the answer check keeps it (support >= threshold).
    expect(agreementAt(sentences, 0.6).supportedKept).toBe(2);
    expect(agreementAt(sentences, 0.61).supportedKept).toBe(1);
  });

  it('separates the two kinds whatever the threshold: the share of supported-unsupported pairs ordered right', () => {
    // Pairs (supported, unsupported): 0.9 beats both, 0.6 and 0.5 beat 0.2 only: 4 of 6.
    expect(separation(sentences)).toBeCloseTo(4 / 6, 12);
    expect(separation(sentences.filter((sentence) => sentence.supported))).toBeUndefined();
  });

  it('reads the committed sample, every sentence labelled', async () => {
    const sample = await loadSupportSample(new URL('../golden/support-sample.yaml', import.meta.url).pathname);
    expect(sample.set).toBe('eval/golden/vllm-gke.yaml');
    expect(sample.sentences.length).toBeGreaterThanOrEqual(90);
    expect(new Set(sample.sentences.map((sentence) => typeof sentence.supported))).toEqual(new Set(['boolean']));
  });

  it('refuses a sample whose sentence has no label', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'rag-support-sample-'));
    try {
      const file = join(folder, 'sample.yaml');
      await writeFile(file, 'set: eval/golden/vllm-gke.yaml\npassages: 5\nsentences:\n  - question: 1\n    claim: "A claim."\n    from: structured\n');
      await expect(loadSupportSample(file)).rejects.toThrow(/supported/);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
