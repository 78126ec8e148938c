/**
 * The runbook (k8s/rag/README.md, step 5) creates the Secrets the pods read; some it lets an installation
 * skip (no LLM stack: no `vllm-api-key`; no alert webhook yet: no `alertmanager-receiver`). A pod that
 * references a skipped Secret without `optional: true` stays in CreateContainerConfigError, which is
 * where a fresh project stopped at step 7.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseDir, type Manifest, podSpecOf, ragDir, readKustomization, workloads } from './render.ts';

interface SecretReference {
  workload: string;
  secret: string;
  optional: boolean;
}

/** The Secrets step 5 creates, and those the prose before their command says may be skipped. */
export function runbookSecrets(runbook: string): { created: Set<string>; skippable: Set<string> } {
  const step = runbook.slice(runbook.indexOf('## 5.'), runbook.indexOf('## 6.'));
  const created = new Set<string>();
  const skippable = new Set<string>();
  const blocks = [...step.matchAll(/```sh\n([\s\S]*?)```/g)];
  let proseStart = 0;
  for (const block of blocks) {
    const prose = step.slice(proseStart, block.index);
    proseStart = block.index! + block[0].length;
    const names = [...block[1]!.matchAll(/create secret generic ([a-z0-9-]+)/g)].map((match) => match[1]!);
    for (const name of names) {
      created.add(name);
      if (/skip|until this secret exists/i.test(prose)) skippable.add(name);
    }
  }
  return { created, skippable };
}

function secretReferences(objects: Manifest[]): SecretReference[] {
  return workloads(objects).flatMap((workload) => {
    const spec = podSpecOf(workload);
    const containers: Manifest[] = [...(spec.initContainers ?? []), ...spec.containers];
    const fromEnv = containers.flatMap((container) => [
      ...(container.env ?? []).filter((variable: Manifest) => variable.valueFrom?.secretKeyRef).map((variable: Manifest) => variable.valueFrom.secretKeyRef),
      ...(container.envFrom ?? []).filter((source: Manifest) => source.secretRef).map((source: Manifest) => source.secretRef),
    ]);
    const fromVolumes = (spec.volumes ?? [])
      .filter((volume: Manifest) => volume.secret)
      .map((volume: Manifest) => ({ name: volume.secret.secretName, optional: volume.secret.optional }));
    return [...fromEnv, ...fromVolumes].map((reference) => ({ workload: workload.metadata.name, secret: reference.name, optional: reference.optional === true }));
  });
}

describe('the Secrets of the runbook', () => {
  const runbook = readFileSync(join(ragDir, 'README.md'), 'utf8');
  const { created, skippable } = runbookSecrets(runbook);
  const references = secretReferences(readKustomization(baseDir).objects);

  it('are read from step 5, with the gateway key and the alert webhook as the skippable ones', () => {
    expect([...skippable].sort()).toEqual(['alertmanager-receiver', 'vllm-api-key']);
    expect(created.has('rag-api-keys')).toBe(true);
  });

  it('cover every Secret a pod references', () => {
    expect(references.filter((reference) => !created.has(reference.secret) && !reference.optional).map((reference) => `${reference.workload} → ${reference.secret}`)).toEqual([]);
  });

  it('that may be skipped are optional wherever a pod references them', () => {
    const required = references.filter((reference) => skippable.has(reference.secret) && !reference.optional);
    expect(required.map((reference) => `${reference.workload} → ${reference.secret}`)).toEqual([]);
    expect(references.some((reference) => reference.secret === 'vllm-api-key'), 'the API reads the gateway key').toBe(true);
  });
});

describe('the alert webhook and the first alerts in the runbook', () => {
  const runbook = readFileSync(join(ragDir, 'README.md'), 'utf8');

  it('creates alertmanager-receiver from the operator\'s own URL, never a literal example one', () => {
    const line = runbook.split('\n').find((candidate) => candidate.includes('create secret generic alertmanager-receiver'))!;
    expect(line).toContain('${ALERT_WEBHOOK_URL:?');
    expect(runbook).not.toMatch(/--from-literal=url='?https?:\/\/[a-z.]*example\.com/);
  });

  it('says that Watchdog fires, always, after step 9 (rag-alerts.yml: expr vector(1))', () => {
    const rules = readFileSync(join(ragDir, 'observability/files/rag-alerts.yml'), 'utf8');
    expect(rules).toMatch(/alert: Watchdog\n\s+expr: vector\(1\)/);
    const step10 = runbook.slice(runbook.indexOf('## 10.'), runbook.indexOf('## Operations'));
    expect(step10).toMatch(/only `Watchdog` fires\. It always fires/);
    expect(step10).not.toMatch(/none should fire/i);
  });
});
