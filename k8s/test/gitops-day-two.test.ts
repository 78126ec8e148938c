/**
 * Day two under GitOps (issue 42, item 1; README "GitOps: day two"). The Argo CD example syncs with selfHeal: a change
 * made with kubectl to an object the installation holds is put back from git. So each day-two procedure has a
 * committed form: a change to the GitOps example's kustomization. Each test renders the example before and after
 * that commit (in a copy, as the controller renders the operator's repository at each commit) and checks that what
 * the procedure needs is in the render after it, the desired state the controller then keeps, and not before it
 * (the same change made with kubectl would be a difference from git, which self-heal reverts).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitopsAfter, kustomizeUnavailable, type Manifest, podSpecOf, ragDir, readYaml } from './render.ts';
import { schemaErrors } from './schema.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

const find = (objects: Manifest[], kind: string, name: string): Manifest => objects.find((object) => object.kind === kind && object.metadata.name === name);
const container = (workload: Manifest, name: string): Manifest => podSpecOf(workload).containers.find((candidate: Manifest) => candidate.name === name);
/** A container's environment as the pod sees it: its ConfigMaps (envFrom), then its own env, which wins. */
function environment(objects: Manifest[], workload: Manifest, name: string): Record<string, string> {
  const own = container(workload, name);
  const values: Record<string, string> = {};
  for (const source of own.envFrom ?? []) Object.assign(values, find(objects, 'ConfigMap', source.configMapRef?.name)?.data ?? {});
  for (const variable of own.env ?? []) values[variable.name] = variable.value ?? '(secret)';
  return values;
}
const modelOf = (objects: Manifest[], deployment: string): string => container(find(objects, 'Deployment', deployment), 'tei').args[0].split('=')[1];
const envNames = (workload: Manifest, name: string): string[] => (container(workload, name).env ?? []).map((variable: Manifest) => variable.name);

const newModel = 'Qwen/Qwen3-Embedding-4B';
const candidateUrl = 'http://embed-tei-next.rag.svc.cluster.local:8080';

type Edit = (kustomization: Manifest) => void;
const addComponent = (component: string): Edit => (kustomization) => kustomization.components.push(`../../components/${component}`);
const addLiteral = (generator: string, literal: string): Edit => (kustomization) => {
  const entry = kustomization.configMapGenerator.find((candidate: Manifest) => candidate.name === generator);
  entry.literals = [...entry.literals.filter((existing: string) => !existing.startsWith(`${literal.split('=')[0]}=`)), literal];
};
const addPatch = (patch: Manifest): Edit => (kustomization) => kustomization.patches.push(patch);
const all = (...edits: Edit[]): Edit => (kustomization) => { for (const edit of edits) edit(kustomization); };

// The commits of a model change (README "GitOps: day two", model change), each on top of the one before.
const candidate: Edit = all(addComponent('candidate-tei'), (kustomization) => {
  kustomization.configMapGenerator.push({ name: 'candidate-tei', literals: [`CANDIDATE_EMBED_MODEL=${newModel}`], options: { annotations: { 'config.kubernetes.io/local-config': 'true' } } });
});
const alias: Edit = addLiteral('rag-config', 'QDRANT_COLLECTION=docs');
/** Step 3's commit, the `kubectl set env` of the kubectl path: strategic-merge patches, merged by container and variable name. */
const moveToCandidate: Edit = all(
  addPatch({ target: { kind: 'Deployment', name: 'retrieval' }, patch: `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: retrieval}\nspec:\n  template:\n    spec:\n      containers:\n        - name: retrieval\n          env:\n            - {name: EMBED_URL, value: "${candidateUrl}"}\n            - {name: EMBED_MODEL, value: "${newModel}"}\n` }),
  addPatch({ target: { kind: 'CronJob', name: 'ingest' }, patch: `apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: ingest}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers:\n            - name: ingest\n              env:\n                - {name: EMBED_URL, value: "${candidateUrl}"}\n                - {name: EMBED_MODEL, value: "${newModel}"}\n` }),
);
const permanentModel: Edit = addLiteral('rag-config', `EMBED_MODEL=${newModel}`);

describe.skipIf(Boolean(unavailable))('day two under GitOps: each procedure as a commit to the example', () => {
  const before = gitopsAfter(alias);

  describe('a model change with blue/green aliases', () => {
    const step1 = gitopsAfter(all(alias, candidate));
    const step3 = gitopsAfter(all(alias, candidate, moveToCandidate));
    const step4a = gitopsAfter(all(alias, candidate, moveToCandidate, permanentModel));
    const step4b = gitopsAfter(all(alias, permanentModel));

    it('once: the API and the job read the collection through the alias', () => {
      expect(find(before, 'ConfigMap', container(find(before, 'Deployment', 'retrieval'), 'retrieval').envFrom[0].configMapRef.name).data.QDRANT_COLLECTION).toBe('docs');
    });

    it('step 1: the candidate TEI serves the new model beside the old one, reachable by the API and the job', async () => {
      expect(find(before, 'Deployment', 'embed-tei-next')).toBeUndefined();
      const next = find(step1, 'Deployment', 'embed-tei-next');
      expect(await schemaErrors([next])).toEqual([]);
      expect(modelOf(step1, 'embed-tei-next')).toBe(newModel);
      expect(modelOf(step1, 'embed-tei')).toBe(modelOf(before, 'embed-tei'));
      for (const policy of ['retrieval-egress', 'ingest-egress']) expect(JSON.stringify(find(step1, 'NetworkPolicy', policy).spec.egress), policy).toContain('embed-tei-next');
    });

    it('step 3 (after the alias flip): the API and the nightly job on the candidate TEI with the new model, each variable once', () => {
      for (const [kind, name, containerName] of [['Deployment', 'retrieval', 'retrieval'], ['CronJob', 'ingest', 'ingest']] as const) {
        const workload = find(step3, kind, name);
        expect(environment(step3, workload, containerName), name).toMatchObject({ EMBED_URL: candidateUrl, EMBED_MODEL: newModel });
        for (const variable of ['EMBED_URL', 'EMBED_MODEL']) expect(envNames(workload, containerName).filter((candidateName) => candidateName === variable), `${name} ${variable}`).toHaveLength(envNames(workload, containerName).includes(variable) ? 1 : 0);
        // Before this commit the controller's desired state has the old values: a `kubectl set env` is a difference from git.
        expect(environment(step1, find(step1, kind, name), containerName).EMBED_MODEL).not.toBe(newModel);
      }
      expect(find(step3, 'Deployment', 'embed-tei-next')).toBeDefined();
    });

    it('step 4, first commit: EMBED_MODEL in the installation\'s rag-config moves both TEI servers (components/embed-model), the API still on the candidate', () => {
      expect(modelOf(step4a, 'embed-tei')).toBe(newModel);
      expect(modelOf(step4a, 'embed-tei-ingest')).toBe(newModel);
      expect(environment(step4a, find(step4a, 'Deployment', 'retrieval'), 'retrieval').EMBED_URL).toBe(candidateUrl);
      expect(find(step4a, 'Deployment', 'embed-tei-next')).toBeDefined();
    });

    it('step 4, second commit: candidate and overrides removed; API, job and servers all on the new model, each on its own server', () => {
      expect(find(step4b, 'Deployment', 'embed-tei-next')).toBeUndefined();
      expect(modelOf(step4b, 'embed-tei')).toBe(newModel);
      expect(modelOf(step4b, 'embed-tei-ingest')).toBe(newModel);
      const api = environment(step4b, find(step4b, 'Deployment', 'retrieval'), 'retrieval');
      expect(api).toMatchObject({ EMBED_MODEL: newModel, EMBED_URL: environment(before, find(before, 'Deployment', 'retrieval'), 'retrieval').EMBED_URL });
      const job = environment(step4b, find(step4b, 'CronJob', 'ingest'), 'ingest');
      expect(job).toMatchObject({ EMBED_MODEL: newModel, EMBED_URL: environment(before, find(before, 'CronJob', 'ingest'), 'ingest').EMBED_URL });
      expect(job.EMBED_URL).toContain('embed-tei-ingest');
    });

    it('roll back (before step 4): reverting step 3\'s commit gives step 1\'s render again', () => {
      expect(JSON.stringify(gitopsAfter(all(alias, candidate)))).toBe(JSON.stringify(step1));
    });
  });

  describe('a backfill', () => {
    const load = gitopsAfter(all(alias, addComponent('backfill'), addPatch({ target: { kind: 'Deployment', name: 'docling-serve' }, patch: '- {op: replace, path: /spec/replicas, value: 4}' })));
    const prune = gitopsAfter(all(alias, addComponent('backfill-prune')));

    it('first commit: the Indexed Job, the nightly CronJob suspended, docling-serve at one replica per shard', () => {
      expect(find(before, 'CronJob', 'ingest').spec.suspend ?? false).toBe(false);
      expect(find(before, 'Job', 'backfill')).toBeUndefined();
      expect(find(load, 'Job', 'backfill')).toBeDefined();
      expect(find(load, 'Job', 'backfill-prune'), 'the prune waits for its own commit').toBeUndefined();
      expect(find(load, 'CronJob', 'ingest').spec.suspend).toBe(true);
      expect(find(load, 'Deployment', 'docling-serve').spec.replicas).toBe(find(load, 'Job', 'backfill').spec.parallelism);
      expect(find(before, 'Deployment', 'docling-serve').spec.replicas).toBe(1);
    });

    it('second commit: the prune Job, the load Job gone (pruned), the CronJob still suspended', () => {
      expect(find(prune, 'Job', 'backfill-prune')).toBeDefined();
      expect(find(prune, 'Job', 'backfill')).toBeUndefined();
      expect(find(prune, 'CronJob', 'ingest').spec.suspend).toBe(true);
    });

    it('last commit: no Job, the CronJob runs again', () => {
      expect(before.filter((object) => object.kind === 'Job')).toEqual([]);
      expect(find(before, 'CronJob', 'ingest').spec.suspend ?? false).toBe(false);
    });
  });

  describe('a restore', () => {
    it('one commit adds the Job with the installation\'s bucket and image, the next removes it', () => {
      const restoring = gitopsAfter(all(alias, addComponent('restore')));
      const job = find(restoring, 'Job', 'qdrant-restore');
      expect(job).toBeDefined();
      expect(container(job, 'restore').image).toBe(container(find(restoring, 'CronJob', 'qdrant-backup'), 'backup').image);
      expect(environment(restoring, job, 'restore').BACKUP_LOCATION).toBe('gs://acme-rag-docs-backups/qdrant-snapshots/');
      expect(find(before, 'Job', 'qdrant-restore')).toBeUndefined();
    });
  });

  describe('a scale-out', () => {
    const distributed = gitopsAfter(all(alias, addComponent('distributed')));
    const [application] = readYaml(join(ragDir, 'examples', 'argocd', 'application.yaml'));

    it('listing components/distributed: 3 Qdrant peers, 2 query TEIs, the API\'s autoscaler, the sharded collection settings', async () => {
      expect(find(before, 'StatefulSet', 'qdrant').spec.replicas).toBe(1);
      expect(find(distributed, 'StatefulSet', 'qdrant').spec.replicas).toBe(3);
      expect(find(distributed, 'Deployment', 'embed-tei').spec.replicas).toBe(2);
      const config = find(distributed, 'ConfigMap', container(find(distributed, 'Deployment', 'retrieval'), 'retrieval').envFrom[0].configMapRef.name).data;
      expect(config).toMatchObject({ QDRANT_SHARD_NUMBER: '2', QDRANT_REPLICATION_FACTOR: '2', QDRANT_COLLECTION: 'docs', GCS_BUCKET: 'acme-rag-docs' });
      expect(await schemaErrors(distributed)).toEqual([]);
    });

    it('the Argo CD example ignores, and leaves on sync, the one field the autoscaler owns: the API\'s replicas', () => {
      const autoscaler = distributed.find((object) => object.kind === 'HorizontalPodAutoscaler');
      expect(autoscaler.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'retrieval' });
      expect(find(distributed, 'Deployment', 'retrieval').spec.replicas, 'the manifest still sets it: the controller must ignore it').toBeDefined();
      expect(application.spec.ignoreDifferences).toContainEqual({ group: 'apps', kind: 'Deployment', name: 'retrieval', namespace: 'rag', jsonPointers: ['/spec/replicas'] });
      expect(application.spec.syncPolicy.syncOptions).toContain('RespectIgnoreDifferences=true');
    });
  });

  describe('a Qdrant upgrade', () => {
    it('an images entry in the installation sets the StatefulSet\'s image', () => {
      const image = 'v1.18.0@sha256:' + 'a'.repeat(64);
      const upgraded = gitopsAfter(all(alias, (kustomization) => kustomization.images.push({ name: 'qdrant/qdrant', newTag: image })));
      expect(container(find(upgraded, 'StatefulSet', 'qdrant'), 'qdrant').image).toBe(`qdrant/qdrant:${image}`);
    });
  });

  describe('a backup now', () => {
    it('needs no commit: the Job made from the CronJob is not an object of the installation, and the CronJob it is made from is', () => {
      expect(find(before, 'CronJob', 'qdrant-backup')).toBeDefined();
      expect(before.filter((object) => object.kind === 'Job')).toEqual([]);
    });
  });
});
