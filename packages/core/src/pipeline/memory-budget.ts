/**
 * What the ingest job may hold at most, against the container's memory limit. Each conversion worker is bounded
 * (its heap, INGEST_CONVERT_MEMORY_MB; what it holds outside the heap, INGEST_CONVERT_BUFFERS_MB, see
 * buffer-watch.ts; and its own share: young generation, code, stack), the job's own thread is given
 * INGEST_MAIN_MEMORY_MB (the store's and embedder's clients, documents read and in flight, docling's answers).
 * The sum must fit the cgroup's limit, or a run of unlucky documents gets the pod OOM-killed: every scheduled
 * run dies on the same files, nothing after them is reached and nothing is pruned (issue 43, finding 3).
 */
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { RagError } from '../errors.ts';

/**
 * A worker's own memory beside its old generation and its buffers: the young generation (up to 3 × 16 MiB
 * semi-spaces), code, its thread's stack and native state. An idle worker that loaded the converters measured
 * about 60 MiB resident (from source, through tsx); 128 leaves the young generation room.
 */
export const WORKER_OWN_MB = 128;

/**
 * A container's own limit, where the runtime gives it a cgroup namespace (Kubernetes, Docker): its cgroup is the
 * root of what it sees, v2's `memory.max` or v1's `memory.limit_in_bytes`.
 */
export const CGROUP_MEMORY_LIMIT_FILES = ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'] as const;
const CGROUP_ROOT = '/sys/fs/cgroup';

/** cgroup v1 writes its "no limit" as the largest page-aligned signed 64-bit value (9223372036854771712): anything past 2^60 is none. */
const NO_LIMIT_BEYOND = 2 ** 60;
const MIB = 1024 * 1024;

export interface MemoryPlan {
  /** Conversion worker threads (0: documents convert on the job's own thread, bounded by nothing of their own). */
  workers: number;
  /** INGEST_CONVERT_MEMORY_MB. */
  heapMb: number;
  /** INGEST_CONVERT_BUFFERS_MB. */
  buffersMb: number;
  /** INGEST_MAIN_MEMORY_MB. */
  mainMb: number;
}

export interface ContainerLimit {
  mb: number;
  /** The file it was read from. */
  file: string;
}

/** The most a worker holds: its heap, its buffers and its own share. */
export function workerBoundMb(plan: Pick<MemoryPlan, 'heapMb' | 'buffersMb'>): number {
  return plan.heapMb + plan.buffersMb + WORKER_OWN_MB;
}

/** The most the job holds: every worker at its bound, and its own thread. */
export function jobBoundMb(plan: MemoryPlan): number {
  return plan.workers * workerBoundMb(plan) + plan.mainMb;
}

/**
 * The limit files of the cgroups this process is in, read from /proc/self/cgroup: its own group and each one above
 * it, for v2 (`0::/path`) and v1's memory controller (`4:memory:/path`), then CGROUP_MEMORY_LIMIT_FILES. Without
 * a cgroup namespace (a `systemd-run --scope -p MemoryMax=2G` on a host, a sandbox) the group is a path under
 * /sys/fs/cgroup, and a limit set on it or on a parent binds the process as much as a container's.
 */
export function cgroupMemoryLimitFiles(selfCgroup: string = readOrEmpty('/proc/self/cgroup'), root: string = CGROUP_ROOT): string[] {
  const files: string[] = [];
  for (const line of selfCgroup.split('\n')) {
    const [, controllers, path] = /^\d+:([^:]*):(\/.*)$/.exec(line.trim()) ?? [];
    if (path === undefined) continue;
    if (controllers === '') files.push(...ancestors(path).map((group) => posix.join(root, group, 'memory.max')));
    else if (controllers!.split(',').includes('memory')) files.push(...ancestors(path).map((group) => posix.join(root, 'memory', group, 'memory.limit_in_bytes')));
  }
  return [...new Set([...files, ...CGROUP_MEMORY_LIMIT_FILES])];
}

/** `/a/b` → `/a/b`, `/a`, `/`. */
function ancestors(path: string): string[] {
  const groups = [posix.normalize(path)];
  while (groups.at(-1) !== '/') groups.push(posix.dirname(groups.at(-1)!));
  return groups;
}

function readOrEmpty(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/**
 * The lowest limit `files` set, in MiB (rounded down): the one that binds. Undefined when none sets one (no cgroup,
 * `max`, v1's no-limit, a file absent or not a number).
 */
export function containerMemoryLimit(files: readonly string[] = cgroupMemoryLimitFiles()): ContainerLimit | undefined {
  let lowest: ContainerLimit | undefined;
  for (const file of files) {
    const text = readOrEmpty(file).trim();
    const bytes = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(bytes) || bytes >= NO_LIMIT_BEYOND) continue;
    const mb = Math.floor(bytes / MIB);
    if (!lowest || mb < lowest.mb) lowest = { mb, file };
  }
  return lowest;
}

/**
 * Refuses to start (RAG_CONFIG_INVALID) when the job's bound passes the container's limit, naming the numbers and
 * the settings to change. It refuses rather than running fewer workers: the CronJob's time budgets (EMBED_TIMEOUT_MS,
 * activeDeadlineSeconds) are derived from its concurrency, fewer workers would quietly make every run slower, and
 * none would convert on the job's own thread with no bound at all; a setting that does not fit is a mistake in the
 * manifest, said on the first run instead of an OOM kill on the first large document.
 */
export function assertMemoryFits(plan: MemoryPlan, limit: ContainerLimit | undefined): void {
  if (!limit) return;
  const needed = jobBoundMb(plan);
  if (needed <= limit.mb) return;
  const workers =
    plan.workers === 0
      ? ''
      : `${plan.workers} conversion worker${plan.workers > 1 ? 's' : ''} × ${workerBoundMb(plan)} MiB (INGEST_CONVERT_MEMORY_MB ${plan.heapMb} of heap + INGEST_CONVERT_BUFFERS_MB ${plan.buffersMb} outside it + ${WORKER_OWN_MB} of its own) + `;
  throw new RagError(
    'RAG_CONFIG_INVALID',
    `(the ingest job may hold ${workers}INGEST_MAIN_MEMORY_MB ${plan.mainMb} for its own thread = ${needed} MiB, past the container's memory limit of ${limit.mb} MiB (${limit.file}). ` +
      'Lower INGEST_CONVERT_WORKERS (default: INGEST_CONCURRENCY, at most one a core), INGEST_CONVERT_MEMORY_MB or INGEST_CONVERT_BUFFERS_MB, or raise the limit.)',
  );
}
