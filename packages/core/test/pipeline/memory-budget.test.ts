/**
 * The ingest job's bound against the container's memory limit (issue 43, finding 3): read from the cgroup's
 * files, given here in a temporary folder.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertMemoryFits, CGROUP_MEMORY_LIMIT_FILES, cgroupMemoryLimitFiles, containerMemoryLimit, jobBoundMb, workerBoundMb, WORKER_OWN_MB } from '../../src/pipeline/memory-budget.ts';

const folder = mkdtempSync(join(tmpdir(), 'cgroup-'));
function cgroupFile(name: string, text: string): string {
  const path = join(folder, name);
  writeFileSync(path, text);
  return path;
}
const GIB = 1024 * 1024 * 1024;

describe("the container's memory limit", () => {
  it('is read from cgroup v2 memory.max, else v1 memory.limit_in_bytes, in MiB', () => {
    const v2 = cgroupFile('v2-memory.max', `${2 * GIB}\n`);
    const v1 = cgroupFile('v1-memory.limit_in_bytes', `${3 * GIB}\n`);
    expect(containerMemoryLimit([v2, v1])).toEqual({ mb: 2048, file: v2 });
    expect(containerMemoryLimit([join(folder, 'absent'), v1])).toEqual({ mb: 3072, file: v1 });
    expect(containerMemoryLimit([cgroupFile('odd', '2147483647\n')])).toEqual({ mb: 2047, file: join(folder, 'odd') });
  });

  it('is the lowest limit any of the files sets: a parent group binds its children', () => {
    const child = cgroupFile('child-memory.max', 'max\n');
    const parent = cgroupFile('parent-memory.max', `${GIB}\n`);
    const grandparent = cgroupFile('grandparent-memory.max', `${4 * GIB}\n`);
    expect(containerMemoryLimit([child, parent, grandparent])).toEqual({ mb: 1024, file: parent });
    // The lowest, not the first found: a namespace's own group may allow more than a parent set outside it.
    expect(containerMemoryLimit([child, grandparent, parent])).toEqual({ mb: 1024, file: parent });
  });

  it("is none for v2's max, v1's largest value, no file, or text that is not a number", () => {
    expect(containerMemoryLimit([cgroupFile('max', 'max\n')])).toBeUndefined();
    expect(containerMemoryLimit([cgroupFile('v1-none', '9223372036854771712\n')])).toBeUndefined();
    expect(containerMemoryLimit([join(folder, 'absent-1'), join(folder, 'absent-2')])).toBeUndefined();
    expect(containerMemoryLimit([cgroupFile('garbage', '2G\n')])).toBeUndefined();
  });
});

describe("the files of this process's cgroups (/proc/self/cgroup)", () => {
  it('are its own group and each above it, v2 and v1 memory, before the namespace root files', () => {
    // A v2 host, the job started by `systemd-run --user --scope -p MemoryMax=2G` (no cgroup namespace).
    const v2 = '0::/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope\n';
    expect(cgroupMemoryLimitFiles(v2, '/cg')).toEqual([
      '/cg/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope/memory.max',
      '/cg/user.slice/user-1000.slice/user@1000.service/app.slice/memory.max',
      '/cg/user.slice/user-1000.slice/user@1000.service/memory.max',
      '/cg/user.slice/user-1000.slice/memory.max',
      '/cg/user.slice/memory.max',
      '/cg/memory.max',
      ...CGROUP_MEMORY_LIMIT_FILES,
    ]);
    // A v1 host (hybrid: the unified line holds no controller files to read past the root).
    const v1 = '9:name=systemd:/\n4:memory:/process_api/job\n3:cpuset:/\n0::/\n';
    expect(cgroupMemoryLimitFiles(v1, '/cg')).toEqual(['/cg/memory/process_api/job/memory.limit_in_bytes', '/cg/memory/process_api/memory.limit_in_bytes', '/cg/memory/memory.limit_in_bytes', '/cg/memory.max', ...CGROUP_MEMORY_LIMIT_FILES]);
    // A container with a cgroup namespace: its group is the root it sees.
    expect(cgroupMemoryLimitFiles('0::/\n', '/sys/fs/cgroup')).toEqual([...CGROUP_MEMORY_LIMIT_FILES]);
    expect(cgroupMemoryLimitFiles('', '/cg')).toEqual([...CGROUP_MEMORY_LIMIT_FILES]);
  });

  it('find a limit set on a parent of the group the process runs in', () => {
    const root = mkdtempSync(join(tmpdir(), 'cgroup-tree-'));
    mkdirSync(join(root, 'jobs', 'ingest', 'run-1'), { recursive: true });
    writeFileSync(join(root, 'jobs', 'ingest', 'memory.max'), `${2 * GIB}\n`);
    writeFileSync(join(root, 'jobs', 'ingest', 'run-1', 'memory.max'), 'max\n');
    const files = cgroupMemoryLimitFiles('0::/jobs/ingest/run-1\n', root);
    expect(containerMemoryLimit(files)).toEqual({ mb: 2048, file: join(root, 'jobs', 'ingest', 'memory.max') });
  });
});

describe("the job's bound", () => {
  const defaults = { workers: 2, heapMb: 1024, buffersMb: 256, mainMb: 512 };

  it('is workers × (heap + buffers + the worker’s own share) + the main thread’s', () => {
    expect(WORKER_OWN_MB).toBe(128);
    expect(workerBoundMb(defaults)).toBe(1024 + 256 + 128);
    expect(jobBoundMb(defaults)).toBe(2 * 1408 + 512);
    expect(jobBoundMb({ ...defaults, workers: 0 })).toBe(512);
  });

  it('passes the limit: the job refuses to start, naming the numbers and the settings to change', () => {
    const limit = { mb: 2048, file: '/sys/fs/cgroup/memory.max' };
    expect(() => assertMemoryFits(defaults, limit)).toThrow(
      expect.objectContaining({
        code: 'RAG_CONFIG_INVALID',
        message: expect.stringMatching(
          /2 conversion workers × 1408 MiB \(INGEST_CONVERT_MEMORY_MB 1024 of heap \+ INGEST_CONVERT_BUFFERS_MB 256 outside it \+ 128 of its own\) \+ INGEST_MAIN_MEMORY_MB 512 for its own thread = 3328 MiB, past the container's memory limit of 2048 MiB \(\/sys\/fs\/cgroup\/memory\.max\)\. Lower INGEST_CONVERT_WORKERS .*INGEST_CONVERT_MEMORY_MB or INGEST_CONVERT_BUFFERS_MB, or raise the limit/,
        ),
      }),
    );
    // One MiB over and exactly at the limit.
    const fitting = { workers: 2, heapMb: 448, buffersMb: 192, mainMb: 512 };
    expect(jobBoundMb(fitting)).toBe(2048);
    expect(() => assertMemoryFits(fitting, limit)).not.toThrow();
    expect(() => assertMemoryFits({ ...fitting, mainMb: 513 }, limit)).toThrow(/= 2049 MiB/);
  });

  it('is not checked without a limit', () => {
    expect(() => assertMemoryFits({ ...defaults, workers: 64 }, undefined)).not.toThrow();
  });
});
