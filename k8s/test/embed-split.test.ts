/**
 * Ingestion never starves queries: the ingest job embeds on its own TEI (embed-tei-ingest), with the same
 * model as the API's embed-tei (the collection is locked to one model), larger batches for throughput,
 * and a smaller CPU request, so under contention the queries' TEI gets the larger share (CPU requests are
 * cgroup weights). TEI's flags: https://huggingface.co/docs/text-embeddings-inference/cli_arguments.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ingestBudget } from './ingest-budget.test.ts';
import { baseDir, kustomize, kustomizeUnavailable, type Manifest, podSpecOf, ragDir, readKustomization } from './render.ts';

const base = readKustomization(baseDir);
const config = base.configMaps.get('rag-config')!;
const byName = (kind: string, name: string): Manifest => base.objects.find((object) => object.kind === kind && object.metadata.name === name);
const cronJob = byName('CronJob', 'ingest');
const job = podSpecOf(cronJob).containers[0];
const jobEnv: Record<string, string> = Object.fromEntries(job.env.filter((variable: Manifest) => variable.value !== undefined).map((variable: Manifest) => [variable.name, variable.value]));
const tei = (name: string): Manifest => podSpecOf(byName('Deployment', name)).containers[0];
const flag = (container: Manifest, name: string): string | undefined =>
  container.args.find((arg: string) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const millicores = (cpu: string) => (cpu.endsWith('m') ? Number(cpu.slice(0, -1)) : Number(cpu) * 1000);
const serviceHost = (url: string) => new URL(url).hostname.split('.')[0];

describe('the ingest job and the API embed on separate TEI servers', () => {
  it('points the job at embed-tei-ingest and the API (rag-config) at embed-tei', () => {
    expect(serviceHost(jobEnv.EMBED_URL!)).toBe('embed-tei-ingest');
    expect(serviceHost(config.EMBED_URL!)).toBe('embed-tei');
    expect(byName('Service', 'embed-tei-ingest').spec.selector).toEqual({ app: 'embed-tei-ingest' });
  });

  it('serves the same model with the same pooling on both, the model EMBED_MODEL names', () => {
    for (const name of ['model-id', 'pooling']) expect(flag(tei('embed-tei-ingest'), name)).toBe(flag(tei('embed-tei'), name));
    expect(flag(tei('embed-tei'), 'model-id')).toBe(config.EMBED_MODEL);
  });

  it('fits one job call in one batch on the ingest TEI, and keeps the query TEI on smaller batches', () => {
    const env = { ...config, ...jobEnv };
    const { tokensPerCall } = ingestBudget(env, cronJob.metadata.annotations, cronJob.spec.jobTemplate.spec.activeDeadlineSeconds);
    expect(Number(flag(tei('embed-tei-ingest'), 'max-batch-tokens'))).toBeGreaterThanOrEqual(tokensPerCall);
    expect(Number(flag(tei('embed-tei'), 'max-batch-tokens'))).toBeLessThan(Number(flag(tei('embed-tei-ingest'), 'max-batch-tokens')));
  });

  it('gives the query TEI the larger CPU request, the ingest TEI the higher limit', () => {
    const [query, ingest] = [tei('embed-tei').resources, tei('embed-tei-ingest').resources];
    expect(millicores(query.requests.cpu)).toBeGreaterThan(millicores(ingest.requests.cpu));
    expect(millicores(ingest.limits.cpu)).toBeGreaterThan(millicores(query.limits.cpu));
  });
});

describe.skipIf(Boolean(kustomizeUnavailable()))('the embedding model, named once', () => {
  it('reaches both TEI servers from EMBED_MODEL in config.env (kustomize replacements)', () => {
    const root = mkdtempSync(join(tmpdir(), 'rag-model-'));
    cpSync(ragDir, root, { recursive: true });
    const env = join(root, 'base', 'config.env');
    writeFileSync(env, readFileSync(env, 'utf8').replace(/^EMBED_MODEL=.*$/m, 'EMBED_MODEL=BAAI/bge-m3'));
    const rendered = kustomize(join(root, 'base'));
    for (const name of ['embed-tei', 'embed-tei-ingest']) {
      const container = podSpecOf(rendered.find((object: Manifest) => object.kind === 'Deployment' && object.metadata.name === name)).containers[0];
      expect(flag(container, 'model-id'), name).toBe('BAAI/bge-m3');
    }
  });
});
