/**
 * The outputs the runbook (k8s/rag/README.md) tells an operator to expect, computed from the repository
 * instead of typed by hand: `pnpm docs:runbook` writes them between `<!-- expected:NAME -->` markers,
 * and runbook-outputs.test.ts fails when the committed runbook is stale.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chunkMarkdown, shardIndexOf } from '@rag/core';
import { podGroups, renderedOverlays, resourceTable } from './pool-fit.ts';
import { baseDir, kustomizeUnavailable, ragDir, readKustomization } from './render.ts';

export const runbookPath = new URL('../rag/README.md', import.meta.url).pathname;
const docsDir = new URL('../../docs/', import.meta.url).pathname;

/** The bucket of the runbook's example (step 0: BUCKET=$PROJECT_ID-rag-docs with PROJECT_ID=my-gcp-project). */
const exampleBucket = 'my-gcp-project-rag-docs';

/**
 * `kubectl apply -k` (step 7) prints one `… created` line per object, resources and generated ConfigMaps,
 * except the Namespace, which step 5 created (`namespace/rag unchanged`).
 */
export function createdObjectCount(): number {
  const base = readKustomization(baseDir);
  return base.objects.filter((object) => object.kind !== 'Namespace').length + base.configMaps.size;
}

/** What step 3 uploads (docs/*.md under the prefix docs/) as step 8's first ingestion chunks it. */
export function firstIngestLine(): string {
  const files = readdirSync(docsDir).filter((name) => name.endsWith('.md'));
  const chunks = files.reduce((total, name) => {
    const markdown = readFileSync(join(docsDir, name), 'utf8');
    return total + chunkMarkdown(markdown, `gs://${exampleBucket}/docs/${name}`, { chunkSize: 1200, chunkOverlap: 200 }).length;
  }, 0);
  return `done: ${files.length} files, ${chunks} chunks, ${chunks} upserts, 0 deletes, 0 skipped, 0 errors`;
}

/** Outputs that need `kubectl kustomize`: left as they are where it cannot run. */
const kustomizeOutputs = new Set(['resources']);

/** Each overlay's table of requests and limits against its pool (pool-fit.ts), as the overlays render. */
export function resourceTables(): string {
  const overlays = renderedOverlays();
  return `\n\n${(Object.keys(overlays) as Array<keyof typeof overlays>).map((overlay) => resourceTable(overlay, podGroups(overlays[overlay]))).join('\n\n')}\n\n`;
}

/**
 * The backfill (k8s/rag/components/backfill) over the same bucket: each pod's share line and summary line, by
 * index, as `rag-ingest --shards` prints them, then the prune-only Job's summary line.
 */
export function backfillLines(): string {
  const backfill = readKustomization(join(ragDir, 'components', 'backfill')).objects.find((object) => object.kind === 'Job' && object.metadata.name === 'backfill');
  const shards: number = backfill.spec.completions;
  const documents = readdirSync(docsDir).filter((name) => name.endsWith('.md')).map((name) => {
    const uri = `gs://${exampleBucket}/docs/${name}`;
    return { uri, chunks: chunkMarkdown(readFileSync(join(docsDir, name), 'utf8'), uri, { chunkSize: 1200, chunkOverlap: 200 }).length };
  });
  const lines = Array.from({ length: shards }, (_, index) => {
    const mine = documents.filter((document) => shardIndexOf(document.uri, shards) === index);
    const chunks = mine.reduce((total, document) => total + document.chunks, 0);
    return `shard ${index}/${shards}: ${mine.length} of ${documents.length} listed documents; pruning is left to one --prune-only run after every shard\ndone: ${mine.length} files, ${chunks} chunks, ${chunks} upserts, 0 deletes, 0 skipped, 0 errors`;
  });
  return `\n\n\`\`\`text\n${lines.join('\n')}\n\`\`\`\n\nand after the prune-only Job: \`done: ${documents.length} files, 0 chunks, 0 upserts, 0 deletes, 0 skipped, 0 errors\`\n\n`;
}

export function expectedOutputs(): Record<string, string> {
  return {
    created: `${createdObjectCount()} \`… created\` lines`,
    'first-ingest': `\`${firstIngestLine()}\``,
    backfill: backfillLines(),
    ...(kustomizeUnavailable() ? {} : { resources: resourceTables() }),
  };
}

/** The runbook with each marked span replaced by its computed value. */
export function withExpectedOutputs(runbook: string, outputs = expectedOutputs()): string {
  return runbook.replace(/<!-- expected:([a-z-]+) -->[\s\S]*?<!-- \/expected -->/g, (span, name: string) => {
    const value = outputs[name];
    if (value === undefined && kustomizeOutputs.has(name)) return span;
    if (value === undefined) throw new Error(`the runbook marks an unknown expected output "${name}"`);
    return `<!-- expected:${name} -->${value}<!-- /expected -->`;
  });
}
