import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RagError, type RerankScore } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../packages/core/test/real/free-ports.ts';
import { postJson, startTestStack, type TestStack } from './test-stack.ts';

/** A real Prometheus (Debian package) scrapes the real API: proves the exposition is what Prometheus reads. */
const prometheusBinary = ['/usr/bin/prometheus', '/usr/local/bin/prometheus'].find((path) => existsSync(path));
if (!prometheusBinary) console.warn('prometheus is not installed (Debian package prometheus): the real-scrape test is skipped');

/** Polls a Prometheus query until it returns series; bounded so that a broken setup fails, not hangs. */
async function querySeries(prometheusUrl: string, query: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
  for (let attempt = 0; attempt < 120; attempt++) {
    const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(query)}`).catch(() => undefined);
    if (response?.ok) {
      const body = (await response.json()) as { data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
      if (body.data.result.length > 0) return body.data.result;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`Prometheus returned no series for ${query}`);
}

/** A reranker that scores by shared words, until it is switched off: then it fails as TEI's does when down. */
const reranker = {
  modelId: 'word-overlap',
  down: false,
  async rerank(query: string, texts: string[]): Promise<RerankScore[]> {
    if (this.down) throw new RagError('RAG_RERANK_UNAVAILABLE', '(the test switched it off)');
    const words = new Set(query.toLowerCase().split(/\W+/));
    const scores = texts.map((text, index) => ({ index, score: text.toLowerCase().split(/\W+/).filter((word) => words.has(word)).length / 100 }));
    return scores.sort((a, b) => b.score - a.score);
  },
};

describe.skipIf(!prometheusBinary)('a real Prometheus scraping /metrics', () => {
  let stack: TestStack;
  let prometheus: ChildProcess;
  let workDir: string;
  let prometheusUrl: string;

  beforeAll(async () => {
    stack = await startTestStack({ reranker });
    // k = 1: more candidates than k, so the reranker runs.
    await postJson(stack.baseUrl, '/search', { query: 'how long are snapshots kept?', k: 1 });
    await postJson(stack.baseUrl, '/search', { query: '' });
    // Then the reranker goes down: the next search answers in the fused order (RERANK_FALLBACK=fused).
    reranker.down = true;
    await postJson(stack.baseUrl, '/search', { query: 'how long are snapshots kept?', k: 1 });
    workDir = await mkdtemp(join(tmpdir(), 'rag-prometheus-'));
    const target = new URL(stack.baseUrl).host;
    await writeFile(join(workDir, 'prometheus.yml'), `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: rag\n    static_configs:\n      - targets: ['${target}']\n`);
    const port = await freePort([Number(new URL(stack.baseUrl).port)]);
    prometheusUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(prometheusBinary!, [
      `--config.file=${join(workDir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(workDir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ], { stdio: 'ignore' });
  });

  afterAll(async () => {
    prometheus?.kill();
    await stack?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('sees the target up and the request counter by route and outcome', async () => {
    expect((await querySeries(prometheusUrl, 'up{job="rag"} == 1')).length).toBe(1);
    const requests = await querySeries(prometheusUrl, 'rag_retrieval_requests_total{route="/search"}');
    const byOutcome = Object.fromEntries(requests.map((series) => [series.metric['outcome'], Number(series.value[1])]));
    expect(byOutcome).toMatchObject({ ok: 2, client_error: 1 });
  });

  it('tells reranked best-passage scores from fused ones, as RagTopScoreDropped selects them', async () => {
    const counts = await querySeries(prometheusUrl, 'sum by (reranked) (rag_retrieval_top_score_count)');
    expect(Object.fromEntries(counts.map((series) => [series.metric['reranked'], Number(series.value[1])]))).toEqual({ true: 1, false: 1 });
  });

  it('computes stage latency quantiles from the histogram buckets, as the dashboard does', async () => {
    const quantiles = await querySeries(prometheusUrl, 'histogram_quantile(0.95, sum by (le, stage) (rag_retrieval_stage_duration_bucket))');
    expect(quantiles.map((series) => series.metric['stage']).sort()).toEqual(['rerank', 'search', 'sparse']);
    for (const series of quantiles) expect(Number(series.value[1])).toBeGreaterThan(0);
  });
});
