/**
 * The ingest job's bound against the container's memory limit (issue 43, finding 3): read from the cgroup's
 * files, given here in a temporary folder.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertMemoryFits, containerMemoryLimit, jobBoundMb, workerBoundMb, WORKER_OWN_MB } from '../../src/pipeline/memory-budget.ts';

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

  it("is none for v2's max, v1's largest value, no file, or text that is not a number", () => {
    expect(containerMemoryLimit([cgroupFile('max', 'max\n')])).toBeUndefined();
    expect(containerMemoryLimit([cgroupFile('v1-none', '9223372036854771712\n')])).toBeUndefined();
    expect(containerMemoryLimit([join(folder, 'absent-1'), join(folder, 'absent-2')])).toBeUndefined();
    expect(containerMemoryLimit([cgroupFile('garbage', '2G\n')])).toBeUndefined();
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
