import type { BenchEnv } from './env';
import type { SeededTenant } from './seed';
import type { RssSampler } from './measure';

/**
 * One line of the result table. ratio = ours / baseline. A target is either relative to the
 * baseline (ratio) or absolute (ours); `better` says which direction is good for this metric.
 */
export interface BenchRow {
  name: string;
  metric: string;
  ours: number;
  baseline: number | null;
  better: 'higher' | 'lower';
  target?: { of: 'ratio' | 'ours'; value: number; label: string };
  notes?: string[];
}

export interface BenchContext {
  env: BenchEnv;
  /** The tenant with BENCH_INVOICES (default 1,000,000) invoices; seeded on first use, shared by the benchmarks of one run. */
  seeded: () => Promise<SeededTenant>;
  sampler: RssSampler;
  /** autocannon connections and seconds for the HTTP benchmarks. */
  connections: number;
  duration: number;
  log: (line: string) => void;
}

export interface Benchmark {
  name: string;
  run: (ctx: BenchContext) => Promise<BenchRow[]>;
}

export function ratioOf(row: BenchRow): number | null {
  return row.baseline ? row.ours / row.baseline : null;
}

export function metOf(row: BenchRow): boolean | null {
  if (!row.target) return null;
  const v = row.target.of === 'ratio' ? ratioOf(row) : row.ours;
  if (v === null || Number.isNaN(v)) return false;
  return row.better === 'higher' ? v >= row.target.value : v <= row.target.value;
}
