/** Small measuring helpers shared by the benchmarks: wall time, peak RSS, percentiles. */
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * A full garbage collection on demand (without starting node with --expose-gc): memory figures
 * taken right after it show what is still referenced, not what the collector has not reclaimed yet.
 */
v8.setFlagsFromString('--expose-gc');
export const gc: () => void = vm.runInNewContext('gc');

/** Heap in use after a full GC, in bytes. */
export function liveHeap(): number {
  gc();
  return process.memoryUsage().heapUsed;
}

export const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;

/** Samples the process RSS every 20 ms; peak() is the highest value since the last reset(). */
export class RssSampler {
  private peakRss = 0;
  private timer: NodeJS.Timeout | null = null;
  start(): this {
    this.timer ??= setInterval(() => this.now(), 20);
    this.timer.unref();
    return this;
  }
  now(): number {
    const r = process.memoryUsage().rss;
    if (r > this.peakRss) this.peakRss = r;
    return r;
  }
  reset(): void {
    this.peakRss = 0;
    this.now();
  }
  peak(): number {
    this.now();
    return this.peakRss;
  }
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

export interface Timed<T> {
  result: T;
  ms: number;
  peakRss: number;
}

/** Run fn after a GC (when exposed), returning its wall time and the peak RSS during it. */
export async function timed<T>(sampler: RssSampler, fn: () => Promise<T>): Promise<Timed<T>> {
  gc();
  sampler.reset();
  const t0 = performance.now();
  const result = await fn();
  return { result, ms: performance.now() - t0, peakRss: sampler.peak() };
}

/** Nearest-rank percentile of unsorted values (p in 0..100). */
export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** Run fn n times sequentially after `warmup` untimed runs; returns operations per second. */
export async function opsPerSecond(n: number, fn: () => Promise<unknown>, warmup = Math.min(5, n)): Promise<{ perSec: number; ms: number }> {
  for (let i = 0; i < warmup; i++) await fn();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn();
  const ms = performance.now() - t0;
  return { perSec: (n * 1000) / ms, ms };
}
