/**
 * CPU time and memory of other processes, from /proc (Linux): what the deployed-shape benchmarks
 * report per process (web, worker, bare baselines), since none of them runs in the benchmark's own.
 */
import fs from 'node:fs';

const TICK_SEC = 1 / 100; // USER_HZ: 100 on every Linux the benchmarks run on

/** utime and stime of one process, and its parent's pid, from /proc/<pid>/stat. */
export function statOf(pid: number | string): { ppid: number; user: number; system: number } {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return { ppid: Number(fields[1]), user: Number(fields[11]) * TICK_SEC, system: Number(fields[12]) * TICK_SEC };
}

/** The process and its direct children alive now (a worker's sandboxed renderers). */
export function treePids(pid: number): number[] {
  const out = [pid];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === pid) continue;
    try {
      if (statOf(entry).ppid === pid) out.push(Number(entry));
    } catch {
      // The process ended between readdir and read.
    }
  }
  return out;
}

/** CPU seconds (user + system) of the process and its direct children alive now. */
export function treeCpuSeconds(pid: number): number {
  let sec = 0;
  for (const p of treePids(pid)) {
    try {
      const s = statOf(p);
      sec += s.user + s.system;
    } catch {
      // Ended meanwhile.
    }
  }
  return sec;
}

function statusKb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Peak RSS of a process tree since the last resetPeak(): each process's VmHWM (the kernel's
 * high-water mark), summed over the tree. Children that ended are not counted.
 */
export function treePeakRss(pid: number): number {
  return treePids(pid).reduce((s, p) => s + statusKb(p, 'VmHWM'), 0);
}

/** Resets VmHWM to the current RSS (writing 5 to clear_refs; allowed on one's own processes). */
export function resetPeak(pid: number): void {
  for (const p of treePids(pid)) {
    try {
      fs.writeFileSync(`/proc/${p}/clear_refs`, '5');
    } catch {
      // Not ours or gone: its peak stays the lifetime one.
    }
  }
}

/** A named set of process trees whose CPU and peak RSS are read together. */
export class ProcessMeter {
  constructor(private readonly pids: () => Record<string, number | undefined>) {}

  private live(): Array<[string, number]> {
    return Object.entries(this.pids()).filter((e): e is [string, number] => typeof e[1] === 'number');
  }

  /** Cumulative CPU µs per process tree. */
  cpuUs(): Record<string, number> {
    return Object.fromEntries(this.live().map(([name, pid]) => [name, treeCpuSeconds(pid) * 1e6]));
  }

  resetPeaks(): void {
    for (const [, pid] of this.live()) resetPeak(pid);
  }

  peaks(): Record<string, number> {
    return Object.fromEntries(this.live().map(([name, pid]) => [name, treePeakRss(pid)]));
  }
}

/** b − a per key (keys of b). */
export function minus(b: Record<string, number>, a: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(b).map(([k, v]) => [k, v - (a[k] ?? 0)]));
}
