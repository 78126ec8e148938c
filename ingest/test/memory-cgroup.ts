/**
 * A real memory cgroup for a child process, as a container's limit would be: created under /sys/fs/cgroup (v2, or
 * v1's memory controller), its limit set, removed when done. Needs root and a writable cgroup file system (this
 * machine has v1's); where there is none, `createMemoryCgroup` says why and callers skip.
 * Files read: v1 memory.limit_in_bytes, memory.max_usage_in_bytes, memory.oom_control (its `oom_kill` line); v2
 * memory.max, memory.swap.max, memory.peak, memory.events (`oom_kill`), as the kernel's documentation names them
 * (https://docs.kernel.org/admin-guide/cgroup-v1/memory.html, https://docs.kernel.org/admin-guide/cgroup-v2.html).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const CGROUP_ROOT = '/sys/fs/cgroup';

export interface MemoryCgroup {
  version: 1 | 2;
  dir: string;
  /** The file a process writes its pid to, to enter the group. */
  procsFile: string;
  /** The most the group held at once, in bytes. */
  peakBytes(): number;
  /** Processes the kernel killed for the group's limit. */
  oomKills(): number;
  /** Removes the group (its processes must have ended). */
  remove(): void;
}

export function createMemoryCgroup(name: string, limitBytes: number): MemoryCgroup | { unavailable: string } {
  if (process.platform !== 'linux') return { unavailable: 'memory cgroups are Linux only' };
  const v2 = existsSync(join(CGROUP_ROOT, 'cgroup.controllers')) && readFileSync(join(CGROUP_ROOT, 'cgroup.subtree_control'), 'utf8').includes('memory');
  const parent = v2 ? CGROUP_ROOT : join(CGROUP_ROOT, 'memory');
  if (!v2 && !existsSync(join(parent, 'memory.limit_in_bytes'))) return { unavailable: `no cgroup v2 memory controller and no v1 memory hierarchy under ${CGROUP_ROOT}` };
  const dir = join(parent, `${name}-${process.pid}-${Date.now()}`);
  try {
    mkdirSync(dir);
    if (v2) {
      writeFileSync(join(dir, 'memory.max'), String(limitBytes));
      if (existsSync(join(dir, 'memory.swap.max'))) writeFileSync(join(dir, 'memory.swap.max'), '0');
    } else {
      writeFileSync(join(dir, 'memory.limit_in_bytes'), String(limitBytes));
    }
  } catch (error) {
    if (existsSync(dir)) rmdirSync(dir);
    return { unavailable: `cannot create a memory cgroup under ${parent} (${(error as Error).message}): run as root on a writable cgroup file system` };
  }
  const entered = spawnSync('sh', ['-c', 'echo $$ > "$0"', join(dir, 'cgroup.procs')], { encoding: 'utf8' });
  if (entered.status !== 0) {
    rmdirSync(dir);
    return { unavailable: `a process cannot enter a cgroup made under ${parent}: ${entered.stderr.trim()}` };
  }
  const read = (file: string) => readFileSync(join(dir, file), 'utf8');
  const oomKillsIn = (file: string) => Number(/^oom_kill (\d+)$/m.exec(read(file))?.[1] ?? Number.NaN);
  return {
    version: v2 ? 2 : 1,
    dir,
    procsFile: join(dir, 'cgroup.procs'),
    peakBytes: () => Number(read(v2 ? 'memory.peak' : 'memory.max_usage_in_bytes')),
    oomKills: () => oomKillsIn(v2 ? 'memory.events' : 'memory.oom_control'),
    remove: () => rmdirSync(dir),
  };
}

/** `command args…` started inside the group: a shell enters it, then becomes the command. */
export function inCgroup(cgroup: Pick<MemoryCgroup, 'procsFile'>, command: string, args: readonly string[]): [string, string[]] {
  return ['sh', ['-c', 'echo $$ > "$0" && exec "$@"', cgroup.procsFile, command, ...args]];
}
