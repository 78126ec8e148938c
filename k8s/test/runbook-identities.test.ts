/**
 * Every Google identity and API a workload needs is made inside the runbook's numbered steps (0 to 10), so that a
 * person who follows them has working backups and traces from the first night. Read from the overlay as
 * configure.sh leaves it: each Kubernetes service account annotated with `iam.gke.io/gcp-service-account` (GKE
 * Workload Identity, https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity) must name a Google
 * account that the steps create, bind to `[rag/<that Kubernetes account>]` as roles/iam.workloadIdentityUser and
 * grant the role its work needs; the backup bucket the CronJob writes to must be created there; and the Cloud Trace
 * API the collector's googlecloud exporter writes to must be enabled (GoogleCloudPlatform/opentelemetry-operator-sample,
 * recipes/cloud-trace/README.md, "Prerequisites": the Cloud Trace API and roles/cloudtrace.agent).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configuredOverlay, kustomizeUnavailable, type Manifest, podSpecOf, ragDir, readYaml, runbookValues } from './render.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

const runbook = readFileSync(join(ragDir, 'README.md'), 'utf8');
/** Steps 0 to 10, with the runbook's variables as an operator's shell would expand them. */
const steps = runbook
  .slice(runbook.indexOf('## 0. Variables'), runbook.indexOf('## Operations'))
  .replace(/\\\n\s*/g, '')
  .replaceAll('$PROJECT_ID', runbookValues.PROJECT_ID)
  .replaceAll('$BUCKET', runbookValues.BUCKET)
  .replaceAll('"', '');

/** The role each Google account needs for its work, and on what (the project or a bucket). */
const roleOf: Record<string, RegExp> = {
  'rag-ingest-sa': new RegExp(`buckets add-iam-policy-binding gs://${runbookValues.BUCKET} --member serviceAccount:rag-ingest-sa@[^ ]+ --role roles/storage.objectViewer`),
  'rag-backup-sa': new RegExp(`buckets add-iam-policy-binding gs://${runbookValues.BUCKET}-backups --member serviceAccount:rag-backup-sa@[^ ]+ --role roles/storage.objectAdmin`),
  'rag-trace-sa': new RegExp(`projects add-iam-policy-binding ${runbookValues.PROJECT_ID} --member serviceAccount:rag-trace-sa@[^ ]+ --role roles/cloudtrace.agent`),
};

describe.skipIf(Boolean(unavailable))('the Google identities of the overlay, made in the numbered steps', () => {
  const objects: Manifest[] = unavailable ? [] : configuredOverlay().objects;
  const bindings = objects
    .filter((object) => object.kind === 'ServiceAccount' && object.metadata.annotations?.['iam.gke.io/gcp-service-account'])
    .map((object) => ({ kubernetes: object.metadata.name as string, google: object.metadata.annotations['iam.gke.io/gcp-service-account'] as string }));

  it('name the three workloads that call Google APIs', () => {
    expect(bindings.map((binding) => binding.kubernetes).sort()).toEqual(['ingestion', 'otel-collector', 'qdrant-backup']);
  });

  it.each(['ingestion', 'qdrant-backup', 'otel-collector'])('%s: its Google account is created, bound to it and granted its role', (kubernetes) => {
    const { google } = bindings.find((binding) => binding.kubernetes === kubernetes)!;
    const [account, domain] = google.split('@');
    expect(domain).toBe(`${runbookValues.PROJECT_ID}.iam.gserviceaccount.com`);
    expect(steps).toMatch(new RegExp(`gcloud iam service-accounts create ${account} `));
    expect(steps).toContain(`gcloud iam service-accounts add-iam-policy-binding ${google} --member serviceAccount:${runbookValues.PROJECT_ID}.svc.id.goog[rag/${kubernetes}] --role roles/iam.workloadIdentityUser`);
    expect(roleOf[account!], `no role is known for ${account}`).toBeDefined();
    expect(steps).toMatch(roleOf[account!]!);
  });

  it('create the bucket the backup CronJob writes to', () => {
    const cronJob = objects.find((object) => object.kind === 'CronJob' && object.metadata.name === 'qdrant-backup');
    const [container] = podSpecOf(cronJob).containers;
    const environment = Object.assign({}, ...container.envFrom.map((source: Manifest) => objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name === source.configMapRef.name).data));
    // --to $(BACKUP_LOCATION), which Kubernetes expands from the rag-backup ConfigMap (envFrom).
    const target: string = container.args[container.args.indexOf('--to') + 1].replace(/\$\(([A-Z_]+)\)/g, (_: string, name: string) => environment[name]);
    const bucket = /^gs:\/\/([^/]+)\//.exec(target)![1];
    expect(steps).toContain(`gcloud storage buckets create gs://${bucket} `);
  });

  it('enable the API of every Google exporter the collector runs', () => {
    const config = readYaml(join(ragDir, 'observability/files/otel-collector-config.yaml'))[0];
    const exporters: string[] = config.service.pipelines.traces.exporters;
    expect(exporters).toContain('googlecloud');
    expect(steps).toMatch(/gcloud services enable [^\n]*cloudtrace\.googleapis\.com/);
  });
});
