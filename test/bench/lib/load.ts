/**
 * HTTP load with autocannon, run in a child process so the load generator never shares an event
 * loop (or a profile) with the server under test, which runs in the benchmark's own process, or
 * with wrk (lib/wrkLoad.ts) where a spec asks for it. Ours and the baseline are driven the same
 * way. Latency percentiles are computed from every response time (autocannon's own summary has
 * no p95).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runWrk, wrkInstalled } from './wrkLoad';

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadSpec {
  /** Base URL, e.g. http://127.0.0.1:3000 */
  url: string;
  connections: number;
  /** Seconds; or `amount` requests. */
  duration?: number;
  amount?: number;
  /** Sent in turn (one cursor over all connections); a single entry is sent every time. */
  requests: LoadRequest[];
  /** Requests per second over all connections, one every 1000 / rate ms (open loop, loadChild.ts); unset: as fast as answered. */
  rate?: number;
  /** Untimed run before the measured one (seconds; ignored with `amount`). */
  warmupSec?: number;
  /**
   * wrk sends a fixed list (`amount`, no `rate`) for a few per cent of a core where autocannon
   * needs a quarter or more (docs/benchmarks.md); without Debian's package wrk, autocannon is
   * used and the run says so. BENCH_LOADGEN=autocannon|wrk overrides it for every run that can.
   */
  tool?: 'autocannon' | 'wrk';
}

export interface LoadResult {
  sent: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  seconds: number;
  /** 2xx responses per second of wall time. */
  okPerSec: number;
  latencyMs: { mean: number; p50: number; p95: number; p99: number; max: number };
  statusCodes: Record<string, number>;
}

const CHILD = fileURLToPath(new URL('./loadChild.ts', import.meta.url));

export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const tool = process.env.BENCH_LOADGEN ?? spec.tool ?? 'autocannon';
  if (tool === 'wrk' && spec.amount && !spec.rate) {
    if (wrkInstalled()) return runWrk(spec);
    if (!warnedNoWrk) console.log('  (wrk is not installed: autocannon sends this load; `apt-get install wrk` for the documented figures)');
    warnedNoWrk = true;
  }
  return runAutocannon(spec);
}

let warnedNoWrk = false;

function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(CHILD, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let result: LoadResult | null = null;
    child.on('message', (m: { result?: LoadResult; error?: string }) => {
      if (m.error) reject(new Error(`load generator: ${m.error}`));
      else result = m.result ?? null;
    });
    child.on('error', reject);
    child.on('exit', (code) => (result ? resolve(result) : reject(new Error(`load generator exited with ${code} without a result`))));
    child.send(spec);
  });
}

export const fmtLoad = (r: LoadResult) =>
  `${r.okPerSec.toFixed(0)} ok/s (${r.ok}/${r.sent} 2xx in ${r.seconds.toFixed(1)} s${r.errors ? `, ${r.errors} errors` : ''}${r.timeouts ? `, ${r.timeouts} timeouts` : ''}${
    r.non2xx ? `, non-2xx ${JSON.stringify(Object.fromEntries(Object.entries(r.statusCodes).filter(([c]) => !c.startsWith('2'))))}` : ''
  }), latency p50 ${r.latencyMs.p50.toFixed(1)} / p95 ${r.latencyMs.p95.toFixed(1)} / p99 ${r.latencyMs.p99.toFixed(1)} ms`;

/** Cumulative CPU µs per process (or process tree), by name. */
export type CpuReader = () => Record<string, number>;

/** The benchmark process's own CPU: where the in-process benchmarks run their servers. */
const ownCpu: CpuReader = () => {
  const c = process.cpuUsage();
  return { server: c.user + c.system };
};

/**
 * Ours and the baseline measured in turn, in slices ordered ABBA ABBA (four slices each of
 * duration / 4 s, rounded up to whole seconds as autocannon runs them), after a warm-up of each:
 * the machine's speed drifts by ±15 % within a 20-second run (docs/benchmarks.md), and two
 * back-to-back 10-second runs put that drift into the ratio. Each side's CPU is read around its
 * slices with `cpu` (default: this process's, where the in-process benchmarks run both servers;
 * the deployed shape reads its web, worker and bare processes from /proc). Returns per side the
 * merged load, CPU µs per request summed over the processes read, and per process. Latency
 * percentiles are the slices' worst, the rates the slices' sums.
 */
export async function interleavedLoads(
  a: LoadSpec,
  b: LoadSpec,
  cpu: { a?: CpuReader; b?: CpuReader } = {},
): Promise<[[LoadResult, number, Record<string, number>], [LoadResult, number, Record<string, number>]]> {
  const slices = 4;
  const sliceSec = Math.max(1, Math.ceil((a.duration ?? 10) / slices));
  for (const spec of [a, b]) await runLoad({ ...spec, duration: spec.warmupSec ?? 2, warmupSec: 0 });
  const taken: Record<'a' | 'b', { results: LoadResult[]; cpuUs: Record<string, number> }> = { a: { results: [], cpuUs: {} }, b: { results: [], cpuUs: {} } };
  for (const side of ['a', 'b', 'b', 'a', 'a', 'b', 'b', 'a'] as const) {
    const read = cpu[side] ?? ownCpu;
    const before = read();
    const r = await runLoad({ ...(side === 'a' ? a : b), duration: sliceSec, warmupSec: 0 });
    const after = read();
    taken[side].results.push(r);
    for (const [name, us] of Object.entries(after)) taken[side].cpuUs[name] = (taken[side].cpuUs[name] ?? 0) + us - (before[name] ?? 0);
  }
  const out = (side: 'a' | 'b'): [LoadResult, number, Record<string, number>] => {
    const merged = mergeLoads(taken[side].results);
    const n = Math.max(1, merged.sent);
    const perProcess = Object.fromEntries(Object.entries(taken[side].cpuUs).map(([name, us]) => [name, us / n]));
    return [merged, Object.values(perProcess).reduce((s, x) => s + x, 0), perProcess];
  };
  return [out('a'), out('b')];
}

/** Several runs' results as one: counts and seconds summed, latency percentiles the worst run's. */
export function mergeLoads(results: LoadResult[]): LoadResult {
  const sum = (f: (r: LoadResult) => number) => results.reduce((t, r) => t + f(r), 0);
  const worst = (f: (r: LoadResult) => number) => Math.max(...results.map(f));
  const ok = sum((r) => r.ok);
  const seconds = sum((r) => r.seconds);
  const statusCodes: Record<string, number> = {};
  for (const r of results) for (const [code, n] of Object.entries(r.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  return {
    sent: sum((r) => r.sent),
    ok,
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    seconds,
    okPerSec: ok / seconds,
    latencyMs: {
      mean: sum((r) => r.latencyMs.mean * r.ok) / Math.max(1, ok),
      p50: worst((r) => r.latencyMs.p50),
      p95: worst((r) => r.latencyMs.p95),
      p99: worst((r) => r.latencyMs.p99),
      max: worst((r) => r.latencyMs.max),
    },
    statusCodes,
  };
}

/**
 * The load after a separate warm-up, with the CPU time this process spent per request: the
 * server runs in this process (the load generator in a child), so that is the server's own cost,
 * steadier than requests/s on a VM whose speed drifts (PostgreSQL and Redis are not in it).
 */
export async function measuredLoad(spec: LoadSpec): Promise<[LoadResult, number, { userUs: number; systemUs: number }]> {
  await runLoad({ ...spec, duration: spec.warmupSec ?? 2, warmupSec: 0 });
  const before = process.cpuUsage();
  const r = await runLoad({ ...spec, warmupSec: 0 });
  const cpu = process.cpuUsage(before);
  const n = Math.max(1, r.sent);
  return [r, (cpu.user + cpu.system) / n, { userUs: cpu.user / n, systemUs: cpu.system / n }];
}
