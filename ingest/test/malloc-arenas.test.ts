/**
 * The ingest job's memory budget (four Debian manuals, 114,736 chunks: 734 MiB peak, bench/results.md) holds
 * with two glibc malloc arenas: with glibc's default of 8 per core, LanceDB's native threads keep freed memory
 * in arenas of their own and the same run peaked at 898 MiB. MALLOC_ARENA_MAX is read by glibc at process
 * start only (mallopt(3), M_ARENA_MAX; glibc manual, "Memory Allocation Tunables", glibc.malloc.arena_max),
 * so it is set where processes start: the images' runtime stage and the pnpm scripts that run the job and the API.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

describe('glibc malloc arenas', () => {
  it('are capped at two in the runtime stage both images build on', () => {
    const runtimeStage = /^FROM \S+ AS runtime$([\s\S]*?)^FROM /m.exec(read('Dockerfile'))?.[1] ?? '';
    expect(runtimeStage).toMatch(/^ENV .*\bMALLOC_ARENA_MAX=2\b/m);
  });

  it('are capped at two by the pnpm scripts that start the job and the API, unless the caller sets them', () => {
    const { scripts } = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    for (const name of ['start', 'ingest', 'serve']) expect(scripts[name], name).toContain('MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}');
  });
});
