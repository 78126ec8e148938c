/**
 * The cost rules (observability/files/rag-cost.yml) against what the installation really runs: every disk the
 * gke overlay claims is priced at its requested size, the rag pool's node count and boot disk are those of
 * runbook step 2, and every route that retrieves (every POST the API documents in /openapi.json) shares the
 * fixed cost. The arithmetic itself is promtool's (rag-cost.test.yml, run by rules.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../services/retrieval/test/test-stack.ts';
import { configuredOverlay, kustomizeUnavailable, type Manifest, ragDir, readYaml } from './render.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

const rules: Manifest[] = readYaml(join(ragDir, 'observability/files/rag-cost.yml'))[0].groups.flatMap((group: Manifest) => group.rules);
const recorded = (name: string) => rules.filter((rule) => rule.record === name);
const runbook = readFileSync(join(ragDir, 'README.md'), 'utf8');
/** The rag pool as step 2 creates it. */
const poolCommand = /gcloud container node-pools create rag-pool[^\n]*\n[^\n]*/.exec(runbook)![0];

/** Gibibytes of a Kubernetes quantity (Gi, Mi, or G). */
function gib(quantity: string): number {
  const [, amount, unit] = /^(\d+(?:\.\d+)?)(Gi|Mi|G)$/.exec(quantity)!;
  return Number(amount) * { Gi: 1, Mi: 1 / 1024, G: 1e9 / 2 ** 30 }[unit as 'Gi' | 'Mi' | 'G'];
}

/** Every disk the rendered objects claim: standalone claims, and each StatefulSet replica's templates. */
function claimedDisks(objects: Manifest[]): Record<string, number> {
  const disks: Record<string, number> = {};
  for (const claim of objects.filter((object) => object.kind === 'PersistentVolumeClaim')) disks[claim.metadata.name] = gib(claim.spec.resources.requests.storage);
  for (const set of objects.filter((object) => object.kind === 'StatefulSet')) {
    for (const template of set.spec.volumeClaimTemplates ?? []) {
      for (let replica = 0; replica < set.spec.replicas; replica++) disks[`${template.metadata.name}-${set.metadata.name}-${replica}`] = gib(template.spec.resources.requests.storage);
    }
  }
  return disks;
}

describe('the cost rules', () => {
  it.skipIf(Boolean(unavailable))('price every disk the gke overlay claims, at its requested size, and the pool node\'s boot disk', () => {
    const priced = Object.fromEntries(recorded('rag:disk_gib').map((rule) => [rule.labels.disk, Number(/vector\((\d+(?:\.\d+)?)\)/.exec(rule.expr)![1])]));
    // gcloud's default boot disk (--disk-size 100, in GB) unless step 2 sets one.
    const bootDisk = Number(/--disk-size[ =](\d+)/.exec(poolCommand)?.[1] ?? 100);
    expect(priced).toEqual({ ...claimedDisks(configuredOverlay().objects), 'rag-pool-boot': bootDisk });
    const types = new Set(recorded('rag:disk_gib').map((rule) => rule.labels.type));
    const prices = new Set(recorded('rag:disk_gib_month_price_usd').map((rule) => rule.labels.type));
    expect([...types].filter((type) => !prices.has(type)), 'every disk type has a price').toEqual([]);
  });

  it('count the rag pool\'s nodes as step 2 creates them, and the cluster fee', () => {
    const nodes = Number(/--num-nodes (\d+)/.exec(poolCommand)![1]);
    expect(recorded('rag:pool_nodes')[0].expr).toBe(`vector(${nodes})`);
    expect(poolCommand).toContain(`--machine-type ${recorded('rag:node_hour_price_usd').find((rule) => rule.labels.node === 'rag').labels.machine_type}`);
    expect(recorded('rag:cluster_fee_usd_per_hour')[0].expr).toBe('vector(0.10)');
    expect(recorded('rag:fixed_cost_usd_per_hour')[0].expr).toBe('rag:pool_cost_usd_per_hour + rag:cluster_fee_usd_per_hour + rag:disk_cost_usd_per_hour');
    expect(recorded('rag:search_cost_usd_per_1k_queries')[0].expr).toContain('rag:fixed_cost_usd_per_hour');
  });

  describe('and the API\'s routes', () => {
    let stack: TestStack;
    beforeAll(async () => {
      stack = await startTestStack();
    });
    afterAll(async () => {
      await stack?.close();
    });

    it('share the fixed cost among every route that retrieves: each POST the API documents', async () => {
      const document = (await (await fetch(`${stack.baseUrl}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
      const posts = Object.entries(document.paths).filter(([, methods]) => 'post' in methods).map(([path]) => path);
      const counted = /route=~"([^"]+)"/.exec(recorded('rag:retrievals_per_second:1d')[0].expr)![1]!;
      expect(posts.sort()).toEqual(['/chat', '/mcp', '/search', '/v1/chat/completions']);
      expect(posts.filter((path) => !new RegExp(`^(?:${counted})$`).test(path))).toEqual([]);
      const answering = /route=~"([^"]+)"/.exec(recorded('rag:chats_per_second:1d')[0].expr)![1]!;
      expect(answering.split('|').sort()).toEqual(['/chat', '/v1/chat/completions']);
    });
  });
});
