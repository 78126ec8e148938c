import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { z } from 'zod';
import { auroc } from './metrics.ts';

/**
 * How well a support measure (the answer check's lexical rule, a dense model's similarity) agrees with a careful
 * reading: sentences a model wrote, each labelled supported or not by a person who read the passages
 * (eval/golden/support-sample.yaml), scored by each measure at a threshold.
 */

const sampleSchema = z
  .object({
    set: z.string(),
    passages: z.number().int().positive(),
    sentences: z.array(z.object({ question: z.number().int().positive(), claim: z.string().min(1), supported: z.boolean(), from: z.string() }).strict()).min(1),
  })
  .strict();

export type SupportSample = z.output<typeof sampleSchema>;

export async function loadSupportSample(file: string): Promise<SupportSample> {
  return sampleSchema.parse(parse(await readFile(file, 'utf8')));
}

export interface ScoredSentence {
  supported: boolean;
  score: number;
}

export interface Agreement {
  threshold: number;
  /** Sentences the reading found supported that the measure keeps (score ≥ threshold). */
  supportedKept: number;
  /** Sentences the reading found unsupported that the measure flags (score < threshold). */
  unsupportedFlagged: number;
  supported: number;
  unsupported: number;
  /** The mean of the two rates: 0.5 is a coin, 1 is the reading. */
  balancedAccuracy: number;
}

export function agreementAt(sentences: readonly ScoredSentence[], threshold: number): Agreement {
  const supported = sentences.filter((sentence) => sentence.supported);
  const unsupported = sentences.filter((sentence) => !sentence.supported);
  const supportedKept = supported.filter((sentence) => sentence.score >= threshold).length;
  const unsupportedFlagged = unsupported.filter((sentence) => sentence.score < threshold).length;
  const rate = (count: number, of: number) => (of === 0 ? 1 : count / of);
  return { threshold, supportedKept, unsupportedFlagged, supported: supported.length, unsupported: unsupported.length, balancedAccuracy: (rate(supportedKept, supported.length) + rate(unsupportedFlagged, unsupported.length)) / 2 };
}

/** The probability that a supported sentence scores above an unsupported one, whatever the threshold. */
export function separation(sentences: readonly ScoredSentence[]): number | undefined {
  return auroc(
    sentences.filter((sentence) => sentence.supported).map((sentence) => sentence.score),
    sentences.filter((sentence) => !sentence.supported).map((sentence) => sentence.score),
  );
}
