/**
 * The ingest image's workloads fit their memory limit: every conversion worker at its bound (heap + buffers +
 * its own share) and the job's own thread (issue 43, finding 3: two 44 MB pages at the CronJob's settings peaked
 * at 2.6 GB against its 2Gi). The job checks the same sum against the container's cgroup at start and refuses
 * to run past it (packages/core/src/pipeline/memory-budget.ts); this catches a manifest that would, before it is applied.
 */
import { join } from 'node:path';
import { loadConfig } from '@rag/core';
import { jobBoundMb, maxHtmlBytesForHeap } from '@rag/core/ingestion';
import { describe, expect, it } from 'vitest';
import { baseDir, type Manifest, podSpecOf, ragDir, readKustomization, readYaml } from './render.ts';

const base = readKustomization(baseDir);
const ragConfig = base.configMaps.get('rag-config')!;
const ingestContainers: [string, Manifest][] = [
  ['CronJob/ingest', base.objects.find((object) => object.kind === 'CronJob' && object.metadata.name === 'ingest')],
  ['Job/backfill', readYaml(join(ragDir, 'components', 'backfill', 'backfill.yaml')).find((object) => object.kind === 'Job')],
  ['Job/backfill-prune', readYaml(join(ragDir, 'components', 'backfill-prune', 'backfill-prune.yaml')).find((object) => object.kind === 'Job')],
];

function mebibytes(quantity: string): number {
  const match = /^(\d+)(Mi|Gi)$/.exec(quantity);
  if (!match) throw new Error(`unexpected quantity ${quantity}`);
  return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1);
}

function ingestContainerOf(workload: Manifest): Manifest {
  return podSpecOf(workload).containers.find((container: Manifest) => container.name === 'ingest');
}

function environmentOf(container: Manifest): Record<string, string> {
  return { ...ragConfig, ...Object.fromEntries((container.env ?? []).filter((variable: Manifest) => variable.value !== undefined).map((variable: Manifest) => [variable.name, variable.value])) };
}

describe.each(ingestContainers)('%s', (_name, workload) => {
  const container = ingestContainerOf(workload);
  const environment = environmentOf(container);
  const config = loadConfig(environment);
  const pruneOnly = (container.args ?? []).includes('--prune-only');
  const limitMb = mebibytes(container.resources.limits.memory);

  it('holds at most its memory limit: workers × (heap + buffers + 128) + the main thread', () => {
    const workers = pruneOnly ? 0 : config.INGEST_CONVERT_WORKERS;
    expect(workers, 'INGEST_CONVERT_WORKERS set explicitly (the default follows the node’s cores)').toBeDefined();
    const plan = { workers: workers!, heapMb: config.INGEST_CONVERT_MEMORY_MB, buffersMb: config.INGEST_CONVERT_BUFFERS_MB, mainMb: config.INGEST_MAIN_MEMORY_MB };
    expect(jobBoundMb(plan), JSON.stringify({ ...plan, limitMb })).toBeLessThanOrEqual(limitMb);
  });

  it('sets two glibc malloc arenas, whatever the image does', () => {
    expect(environment.MALLOC_ARENA_MAX).toBe('2');
  });
});

describe('the CronJob', () => {
  const environment = environmentOf(ingestContainerOf(ingestContainers[0]![1]));

  it('states its memory settings rather than inheriting defaults sized for a laptop', () => {
    for (const name of ['INGEST_CONCURRENCY', 'INGEST_CONVERT_WORKERS', 'INGEST_CONVERT_MEMORY_MB', 'INGEST_CONVERT_BUFFERS_MB', 'INGEST_MAIN_MEMORY_MB']) {
      expect(environment[name], name).toMatch(/^\d+$/);
    }
    expect(Number(environment.INGEST_CONVERT_WORKERS)).toBe(Number(environment.INGEST_CONCURRENCY));
  });

  it('refuses HTML pages of the audit’s size before parsing them', () => {
    expect(maxHtmlBytesForHeap(Number(environment.INGEST_CONVERT_MEMORY_MB))).toBeLessThan(44_000_000);
  });
});
