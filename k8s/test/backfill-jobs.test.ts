/**
 * The one-off first load (k8s/rag/jobs/backfill): an Indexed Job whose pods each sync one share of the
 * bucket with their own TEI, then one prune-only Job. Built with `kubectl kustomize` on a copy of the gke
 * overlay as configure.sh leaves it, as the runbook applies it.
 *
 * Kubernetes semantics relied on, from its documentation:
 * - Indexed Jobs: each pod gets its index in JOB_COMPLETION_INDEX, the Job needs one success per index, and a
 *   failed pod is replaced with one of the same index
 *   (https://kubernetes.io/docs/tasks/job/indexed-parallel-processing-static/);
 * - backoffLimitPerIndex needs completionMode Indexed and restartPolicy Never; podFailurePolicy's Ignore
 *   on DisruptionTarget keeps drains and preemption from counting (beta in 1.29, GA in 1.33:
 *   https://kubernetes.io/blog/2025/05/13/kubernetes-v1-33-jobs-backoff-limit-per-index-goes-ga/);
 * - a sidecar is an init container with restartPolicy Always, started before the main containers (after its
 *   startup probe) and stopped after them (https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/);
 * - `kubectl apply -l` applies only the objects read from files whose labels match the selector
 *   (k8s.io/cli-runtime pkg/resource/builder.go, FilterByLabelSelector on the visitors of file paths).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configuredOverlay, kustomize, kustomizeUnavailable, type Manifest, ragDir, readKustomization, readYaml, baseDir, runbookValues } from './render.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

const alertRules: Manifest[] = readYaml(join(ragDir, 'observability/files/rag-alerts.yml'))[0].groups.flatMap((group: Manifest) => group.rules);

function envMap(container: Manifest): Map<string, Manifest> {
  return new Map((container.env ?? []).map((variable: Manifest) => [variable.name, variable.value ?? variable.valueFrom]));
}

/** The objects `kubectl apply -l key=value` would apply from the rendered list. */
function selected(objects: Manifest[], selector: string): string[] {
  const [key, value] = selector.split('=');
  return objects.filter((object) => object.metadata?.labels?.[key!] === value).map((object) => `${object.kind}/${object.metadata.name}`);
}

async function schemaErrors(objects: Manifest[]): Promise<string[]> {
  const errors: string[] = [];
  for (const object of objects) {
    const module = await import(`kubernetes-models/${object.apiVersion}/${object.kind}`);
    try {
      new module[object.kind](object).validate();
    } catch (error) {
      errors.push(`${object.kind}/${object.metadata?.name}: ${(error as Error).message}`);
    }
  }
  return errors;
}

describe('the backfill jobs, as written', () => {
  it('stay out of the default kustomization: applying an overlay never starts them', () => {
    const names = readKustomization(baseDir).objects.map((object) => `${object.kind}/${object.metadata.name}`);
    expect(names).not.toContain('Job/backfill');
    expect(names).not.toContain('Job/backfill-prune');
  });

  it('are not selected by RagIngestFailed, which selects the CronJob\'s runs (and manual ingest-… runs)', () => {
    const failed = alertRules.find((rule) => rule.alert === 'RagIngestFailed');
    const patterns = [...String(failed.expr).matchAll(/job_name=~"([^"]+)"/g)].map((match) => match[1]!);
    expect(patterns.length).toBeGreaterThan(0);
    for (const pattern of patterns) {
      // PromQL regular expressions are anchored at both ends.
      const regex = new RegExp(`^(?:${pattern})$`);
      expect(regex.test('ingest-29401440'), pattern).toBe(true);
      for (const name of ['backfill', 'backfill-prune']) expect(regex.test(name), `${pattern} selects ${name}`).toBe(false);
    }
  });
});

describe.skipIf(Boolean(unavailable))('kubectl kustomize k8s/rag/jobs/backfill', () => {
  const { folder } = unavailable ? { folder: '' } : configuredOverlay();
  const objects: Manifest[] = unavailable ? [] : kustomize(join(folder, '..', '..', 'jobs', 'backfill'));
  const job = (name: string) => objects.find((object) => object.kind === 'Job' && object.metadata.name === name);
  const backfill = job('backfill');
  const prune = job('backfill-prune');
  const cronJob = objects.find((object) => object.kind === 'CronJob' && object.metadata.name === 'ingest');
  const cronContainer = cronJob?.spec.jobTemplate.spec.template.spec.containers[0];
  const teiDeployment = objects.find((object) => object.kind === 'Deployment' && object.metadata.name === 'embed-tei-ingest');
  const config = objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name.startsWith('rag-config-'));
  const pod = backfill?.spec.template.spec;
  const ingest = pod?.containers.find((container: Manifest) => container.name === 'ingest');
  const tei = pod?.initContainers?.find((container: Manifest) => container.name === 'tei');

  it('renders two valid Jobs, and the runbook\'s selectors apply one step at a time', async () => {
    expect(await schemaErrors([backfill, prune])).toEqual([]);
    expect(selected(objects, 'rag.ingest/step=load')).toEqual(['Job/backfill']);
    expect(selected(objects, 'rag.ingest/step=prune')).toEqual(['Job/backfill-prune']);
    const runbook = readFileSync(join(ragDir, 'README.md'), 'utf8');
    expect(runbook).toContain('kubectl apply -k k8s/rag/jobs/backfill -l rag.ingest/step=load');
    expect(runbook).toContain('kubectl apply -k k8s/rag/jobs/backfill -l rag.ingest/step=prune');
  });

  it('is an Indexed Job of one shard per pod, all at once, each pod retried on its own and resuming', () => {
    expect(backfill.spec.completionMode).toBe('Indexed');
    expect(backfill.spec.parallelism).toBe(backfill.spec.completions);
    expect(Number(envMap(ingest).get('INGEST_SHARDS'))).toBe(backfill.spec.completions);
    expect(backfill.spec.completions).toBeGreaterThan(1);
    expect(backfill.spec.backoffLimitPerIndex).toBeGreaterThan(0);
    expect(pod.restartPolicy).toBe('Never');
    expect(backfill.spec.podFailurePolicy.rules).toContainEqual({ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] });
    expect(envMap(ingest).has('JOB_COMPLETION_INDEX'), 'Kubernetes sets it: a value here would give every pod the same share').toBe(false);
    expect(ingest.args ?? []).toEqual([]);
  });

  it('runs the CronJob\'s ingest container, the installation\'s image and settings, against its own TEI sidecar', () => {
    expect(ingest.image).toBe(cronContainer.image);
    expect(ingest.image).toMatch(new RegExp(`/rag/ingest:${runbookValues.TAG.replaceAll(".", "\\.")}$`));
    expect(ingest.envFrom).toEqual(cronContainer.envFrom);
    expect(ingest.envFrom[0].configMapRef.name).toBe(config.metadata.name);
    expect(ingest.resources).toEqual(cronContainer.resources);
    expect(ingest.securityContext).toEqual(cronContainer.securityContext);
    const own = envMap(ingest);
    for (const [name, value] of envMap(cronContainer)) if (name !== 'EMBED_URL') expect(own.get(name), name).toEqual(value);
    expect(pod.serviceAccountName).toBe(cronJob.spec.jobTemplate.spec.template.spec.serviceAccountName);

    expect(tei.restartPolicy).toBe('Always');
    expect(tei.startupProbe.httpGet.path).toBe('/health');
    const deployed = teiDeployment.spec.template.spec.containers.find((container: Manifest) => container.name === 'tei');
    expect(tei.image).toBe(deployed.image);
    expect(tei.args).toEqual(deployed.args);
    expect(tei.args[0]).toBe(`--model-id=${config.data.EMBED_MODEL}`);
    const port = tei.args.find((arg: string) => arg.startsWith('--port=')).split('=')[1];
    expect(own.get('EMBED_URL')).toBe(`http://127.0.0.1:${port}`);
  });

  it('lets the job\'s network policies select its pods, and meets the restricted profile', () => {
    for (const spec of [pod, prune.spec.template.spec]) {
      expect(spec.automountServiceAccountToken).toBe(false);
      for (const container of [...(spec.initContainers ?? []), ...spec.containers]) {
        const security = { ...spec.securityContext, ...container.securityContext };
        expect(security.runAsNonRoot, container.name).toBe(true);
        expect(security.allowPrivilegeEscalation, container.name).toBe(false);
        expect(security.readOnlyRootFilesystem, container.name).toBe(true);
        expect(security.capabilities.drop, container.name).toContain('ALL');
        expect(security.seccompProfile.type, container.name).toBe('RuntimeDefault');
        expect(container.resources.limits.memory, container.name).toBeTruthy();
      }
      for (const volume of spec.volumes) expect(volume.emptyDir?.sizeLimit, volume.name).toBeTruthy();
    }
    for (const template of [backfill.spec.template, prune.spec.template]) {
      const policies = objects.filter((object) => object.kind === 'NetworkPolicy' && object.spec.podSelector.matchLabels?.app === template.metadata.labels.app);
      expect(policies.map((policy) => policy.metadata.name)).toContain('ingest-egress');
    }
  });

  it('holds RagIngestStale while the load runs, by the Job\'s own name', () => {
    const stale = alertRules.find((rule) => rule.alert === 'RagIngestStale');
    expect(stale.expr).toContain(`kube_job_status_active{namespace="rag", job_name="${backfill.metadata.name}"}`);
  });

  it('prunes once, in its own Job: the whole listing, no share', () => {
    const container = prune.spec.template.spec.containers[0];
    expect(container.args).toEqual(['--prune-only']);
    expect(container.image).toBe(cronContainer.image);
    expect(envMap(container).has('INGEST_SHARDS')).toBe(false);
    expect(prune.spec.completionMode ?? 'NonIndexed').toBe('NonIndexed');
  });

  it('states in the runbook the chunks it can embed before its deadline, at the written-down throughput', () => {
    const tokensPerSecond = Number(backfill.metadata.annotations['rag.ingest/tei-tokens-per-second']);
    expect(tokensPerSecond).toBe(Number(cronJob.metadata.annotations['rag.ingest/tei-tokens-per-second']));
    const tokensPerChunk = Number(config.data.CHUNK_SIZE) / Number(cronJob.metadata.annotations['rag.ingest/characters-per-token']);
    const chunks = Math.floor((backfill.spec.activeDeadlineSeconds * tokensPerSecond * backfill.spec.completions) / tokensPerChunk);
    const nightly = Math.floor((cronJob.spec.jobTemplate.spec.activeDeadlineSeconds * tokensPerSecond) / tokensPerChunk);
    expect(chunks).toBeGreaterThan(100 * nightly);
    const runbook = readFileSync(join(ragDir, 'README.md'), 'utf8');
    expect(runbook).toContain(`about ${(chunks / 1e6).toFixed(1)} million chunks`);
    expect(runbook).toContain(`${backfill.spec.activeDeadlineSeconds / 86400} days`);
  });
});
