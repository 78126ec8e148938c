/**
 * The ingest CronJob's embedding settings follow from one written-down throughput (the CronJob's
 * `rag.ingest/tei-tokens-per-second` annotation): an embedding call must finish well within
 * EMBED_TIMEOUT_MS even when it queues behind the calls of the other documents in flight. With the
 * seed's 30 s and batches of 32 chunks, one call took about a minute on the CPU TEI, so the first
 * ingestion failed with RAG_EMBED_TIMEOUT.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseDir, type Manifest, podSpecOf, ragDir, readKustomization } from './render.ts';

/** A call may wait behind the others in flight and still have this much room. */
const SAFETY_FACTOR = 3;

const base = readKustomization(baseDir);
const cronJob: Manifest = base.objects.find((object) => object.kind === 'CronJob' && object.metadata.name === 'ingest');
const [container] = podSpecOf(cronJob).containers;
const environment: Record<string, string> = {
  ...base.configMaps.get('rag-config'),
  ...Object.fromEntries((container.env ?? []).filter((variable: Manifest) => variable.value !== undefined).map((variable: Manifest) => [variable.name, variable.value])),
};

export interface IngestBudget {
  tokensPerCall: number;
  secondsPerCall: number;
  /** The longest a call can take when it starts behind every other call in flight. */
  worstCaseSeconds: number;
  timeoutSeconds: number;
  /** Chunks one run can embed before activeDeadlineSeconds. */
  chunksPerRun: number;
}

export function ingestBudget(env: Record<string, string>, annotations: Record<string, string>, activeDeadlineSeconds: number): IngestBudget {
  const tokensPerSecond = Number(annotations['rag.ingest/tei-tokens-per-second']);
  const charactersPerToken = Number(annotations['rag.ingest/characters-per-token']);
  const tokensPerChunk = Number(env.CHUNK_SIZE) / charactersPerToken;
  const tokensPerCall = Number(env.EMBED_BATCH_SIZE) * tokensPerChunk;
  const secondsPerCall = tokensPerCall / tokensPerSecond;
  return {
    tokensPerCall,
    secondsPerCall,
    worstCaseSeconds: secondsPerCall * Number(env.INGEST_CONCURRENCY),
    timeoutSeconds: Number(env.EMBED_TIMEOUT_MS) / 1000,
    chunksPerRun: Math.floor((activeDeadlineSeconds * tokensPerSecond) / tokensPerChunk),
  };
}

describe('the ingest CronJob', () => {
  const budget = ingestBudget(environment, cronJob.metadata.annotations, cronJob.spec.jobTemplate.spec.activeDeadlineSeconds);

  it('writes down the throughput its settings come from', () => {
    expect(Number(cronJob.metadata.annotations['rag.ingest/tei-tokens-per-second'])).toBeGreaterThan(0);
    expect(Number(cronJob.metadata.annotations['rag.ingest/characters-per-token'])).toBeGreaterThan(0);
  });

  it('gives every embedding call, queued behind the others in flight, a timeout with room to spare', () => {
    expect(budget.worstCaseSeconds * SAFETY_FACTOR, JSON.stringify(budget)).toBeLessThanOrEqual(budget.timeoutSeconds);
  });

  it('keeps the API on rag-config while the job overrides its batch size and timeout', () => {
    expect(environment.EMBED_BATCH_SIZE).not.toBe(base.configMaps.get('rag-config')!.EMBED_BATCH_SIZE);
    expect(environment.EMBED_TIMEOUT_MS).toBeDefined();
  });

  it('states in the runbook the chunks one run can embed before its deadline', () => {
    const runbook = readFileSync(join(ragDir, 'README.md'), 'utf8');
    expect(runbook).toContain(`about ${budget.chunksPerRun.toLocaleString('en-US')} chunks`);
  });
});
