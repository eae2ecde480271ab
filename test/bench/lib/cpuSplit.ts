import fs from 'node:fs';
import os from 'node:os';
import type { Knex } from 'knex';

/**
 * Where the machine's CPU went during one phase of a benchmark (Linux /proc), by process group:
 * this process (the API), named child processes (the worker, the load generator), PostgreSQL
 * backends by their connection's application_name, PostgreSQL's own background processes, Redis
 * and everything else. On demand (BENCH_CPU_SPLIT=1): it reads every process's stat file every 200 ms.
 */
type Ticks = Map<number, { ticks: number; name: string }>;

const TICK_SEC = 1 / 100; // USER_HZ: 100 on every Linux the benchmarks run on

function readAll(): Ticks {
  const out: Ticks = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      out.set(Number(entry), { ticks: Number(fields[11]) + Number(fields[12]), name: cmd || stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) });
    } catch {
      // The process ended between readdir and read.
    }
  }
  return out;
}

export async function cpuSplit<T>(k: Knex, named: Record<string, () => number | undefined>, phase: () => Promise<T>): Promise<{ result: T; report: string }> {
  const t0 = performance.now();
  const before = readAll();
  // Sampled meanwhile too: the load generator's child process has ended by the time the phase
  // returns, and its last reading is all that is left of it.
  const after: Ticks = new Map();
  const sample = () => {
    for (const [pid, v] of readAll()) after.set(pid, v);
  };
  const timer = setInterval(sample, 200);
  let result: T;
  try {
    result = await phase();
  } finally {
    clearInterval(timer);
  }
  sample();
  const wallSec = (performance.now() - t0) / 1000;
  // Backends of the phase are still connected (pools, the relay's LISTEN); their application_name says whose they are.
  const { rows } = await k.raw('select pid, application_name from pg_stat_activity');
  const appOf = new Map<number, string>(rows.map((r: { pid: number; application_name: string }) => [r.pid, r.application_name]));
  const pidsOf = new Map(Object.entries(named).map(([label, pid]) => [pid(), label]));
  const groups = new Map<string, number>();
  for (const [pid, now] of after) {
    const ticks = now.ticks - (before.get(pid)?.ticks ?? 0);
    if (ticks <= 0) continue;
    const label =
      pid === process.pid
        ? 'api (this process)'
        : (pidsOf.get(pid) ??
          (now.name.startsWith('postgres:')
            ? appOf.has(pid)
              ? `postgres backend: ${appOf.get(pid) || '(no application_name)'}`
              : `postgres ${now.name.split(' ')[1] ?? ''}`.trim()
            : now.name.includes('redis-server')
              ? 'redis'
              : now.name.includes('loadChild')
                ? 'load generator (autocannon)'
                : now.name.startsWith('wrk ')
                  ? 'load generator (wrk)'
                  : 'other'));
    groups.set(label, (groups.get(label) ?? 0) + ticks * TICK_SEC);
  }
  const total = [...groups.values()].reduce((a, b) => a + b, 0);
  const lines = [...groups].sort((a, b) => b[1] - a[1]).map(([label, sec]) => `    ${(sec / wallSec).toFixed(2)} cores  ${label}`);
  const report = [`  CPU over ${wallSec.toFixed(1)} s (${os.cpus().length} cores, ${(total / wallSec).toFixed(2)} busy):`, ...lines].join('\n');
  return { result, report };
}
