/**
 * Benchmarks in the in-process shape (on demand, not part of npm test; docs/benchmarks.md; the
 * deployed shape, web and worker as the Procfile runs them, is test/bench/deployed.ts, `npm run bench`):
 *   npm run bench:in-process                      # all
 *   npm run bench:in-process -- api-read list     # some, by name
 * Each benchmark measures ours and a bare baseline in the same run and prints the ratio; the table
 * and the machine go to test-artifacts/bench-<timestamp>.json. Figures are printed, never asserted
 * (correctness checks such as "no duplicate invoices" are, and set a non-zero exit code).
 *
 * Environment: DATABASE_URL (admin connection; the run creates and drops its own database; unset:
 * embedded PostgreSQL), REDIS_URL (unset: private redis-server; keys under a unique prefix, deleted
 * afterwards), BENCH_CONNECTIONS (20), BENCH_DURATION (10 s), BENCH_INVOICES (1,000,000),
 * BENCH_WEBHOOK_EVENTS (2,000), BENCH_RENDER_N (100), BENCH_IMPORT_N (200).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { prepareBenchEnv, type BenchEnv } from './lib/env';
import { RssSampler, mb } from './lib/measure';
import { metOf, ratioOf, type BenchContext, type BenchRow, type Benchmark } from './lib/types';
import type { SeededTenant } from './lib/seed';
import { apiRead } from './apiRead';
import { apiWrite } from './apiWrite';
import { webhookIngest } from './webhookIngest';
import { rendering } from './rendering';
import { list } from './list';
import { reports } from './reports';
import { einvoiceImport } from './einvoiceImport';

const ALL: Benchmark[] = [apiRead, apiWrite, webhookIngest, rendering, list, reports, einvoiceImport];

const fmt = (n: number | null | undefined) =>
  n === null || n === undefined || Number.isNaN(n) ? '—' : Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2);

async function machine(env: BenchEnv) {
  const info: Record<string, string | number> = {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memory: `${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
  const c = new pg.Client({ connectionString: env.adminUrl });
  await c.connect();
  info.postgres = (await c.query('show server_version')).rows[0].server_version;
  await c.end();
  const r = new Redis(env.redisUrl, { maxRetriesPerRequest: 1 });
  info.redis = /redis_version:(\S+)/.exec(await r.info('server'))?.[1] ?? 'unknown';
  r.disconnect();
  return info;
}

function printTable(rows: Array<BenchRow & { ratio: number | null; met: boolean | null }>) {
  const head = ['name', 'metric', 'ours', 'baseline', 'ratio', 'target', 'met?'];
  const body = rows.map((r) => [
    r.name,
    `${r.metric} (${r.better} is better)`,
    fmt(r.ours),
    fmt(r.baseline),
    r.ratio === null ? '—' : r.ratio.toFixed(2),
    r.target?.label ?? '—',
    r.met === null ? '—' : r.met ? 'yes' : 'NO',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i >= 2 && i <= 4 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
  console.log(`\n${line(head)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const b of body) console.log(line(b));
  for (const r of rows) if (r.notes?.length) console.log(`  ${r.name}: ${r.notes.join('; ')}`);
}

async function main() {
  const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const unknown = wanted.filter((w) => !ALL.some((b) => b.name === w));
  if (unknown.length) {
    console.error(`Unknown benchmark(s): ${unknown.join(', ')}. Available: ${ALL.map((b) => b.name).join(', ')}`);
    process.exit(2);
  }
  const selected = wanted.length ? ALL.filter((b) => wanted.includes(b.name)) : ALL;
  process.env.LOG_LEVEL ??= 'warn';

  const sampler = new RssSampler().start();
  // Every benchmark needs the throwaway database and Redis (rendering too: one part renders through a worker process).
  const env = await prepareBenchEnv();
  let stopping = false;
  process.on('SIGINT', () => {
    if (stopping) process.exit(130);
    stopping = true;
    console.error('\ninterrupted: dropping the bench database and Redis keys');
    void env.cleanup().finally(() => process.exit(130));
  });

  let seeded: Promise<SeededTenant> | null = null;
  const total = Number(process.env.BENCH_INVOICES ?? 1_000_000);
  const ctx: BenchContext = {
    env,
    sampler,
    connections: Number(process.env.BENCH_CONNECTIONS ?? 20),
    duration: Number(process.env.BENCH_DURATION ?? 10),
    log: (line) => console.log(line),
    seeded: () =>
      (seeded ??= (async () => {
        const { seedInvoices } = await import('./lib/seed');
        const { db } = await import('../../shared/db');
        const t0 = performance.now();
        const s = await seedInvoices(env.url, db(), total);
        console.log(
          `  seeded ${total.toLocaleString('en')} invoices (+ items, payments, another tenant's ${(total / 10).toLocaleString('en')}) in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
        );
        return s;
      })()),
  };

  const rows: Array<BenchRow & { ratio: number | null; met: boolean | null }> = [];
  const failures: string[] = [];
  // Other processes on the machine skew every figure: the 1-minute load average at each start is recorded.
  const loadAverages: Record<string, number> = {};
  const startedAt = new Date();
  try {
    for (const b of selected) {
      console.log(
        `\n== ${b.name}   (load average ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')})`,
      );
      loadAverages[b.name] = os.loadavg()[0];
      const t0 = performance.now();
      try {
        for (const r of await b.run(ctx)) rows.push({ ...r, ratio: ratioOf(r), met: metOf(r) });
      } catch (err) {
        failures.push(b.name);
        console.error(`  ${b.name} failed: ${(err as Error).stack ?? err}`);
      }
      console.log(`  (${((performance.now() - t0) / 1000).toFixed(0)} s, RSS now ${mb(sampler.now())})`);
    }
    const info = await machine(env);
    printTable(rows);
    console.log(`\nmachine: ${JSON.stringify(info)}`);
    const dir = path.resolve(import.meta.dirname, '../../test-artifacts');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `bench-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
    fs.writeFileSync(
      file,
      `${JSON.stringify({ startedAt, machine: info, settings: { connections: ctx.connections, duration: ctx.duration, invoices: total }, loadAverages, rows, failures }, null, 2)}\n`,
    );
    console.log(`written: ${path.relative(process.cwd(), file)}`);
    if (failures.length) {
      console.error(`failed: ${failures.join(', ')}`);
      process.exitCode = 1;
    }
    if (rows.some((r) => r.name.endsWith('duplicates') && r.ours !== 0)) process.exitCode = 1;
  } finally {
    sampler.stop();
    await env.cleanup();
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
