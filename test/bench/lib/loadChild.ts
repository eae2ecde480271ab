/**
 * The load side of lib/load.ts: receives one LoadSpec over IPC, answers with a LoadResult.
 * autocannon sends as fast as answered; a `rate` is sent paced (pacedRun), not by autocannon.
 */
import http from 'node:http';
import autocannon, { type Request } from 'autocannon';
import type { LoadResult, LoadSpec } from './load';
import { percentile } from './measure';

/**
 * `rate` requests per second, one every 1000 / rate ms (open loop: the next one goes at its time
 * whether or not earlier ones were answered), over up to `connections` kept-alive sockets, each
 * request's latency counted from the moment it was due. autocannon's own rate limit is per
 * connection per second: each connection sends its share of the second back to back at the tick
 * and then waits, so "50/s" was a burst of 50 at the start of every second, and the latency of a
 * steady stream was the queue of a burst (docs/benchmarks.md, "Receipt → ledger at a steady 50/s").
 */
async function pacedRun(spec: LoadSpec, measured: boolean): Promise<LoadResult> {
  const rate = spec.rate!;
  const total = measured && spec.amount ? spec.amount : Math.round(rate * ((measured ? spec.duration : spec.warmupSec) ?? 1));
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.connections });
  const base = new URL(spec.url);
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let errors = 0;
  const one = (i: number, due: number) =>
    new Promise<void>((resolve) => {
      const r = spec.requests[i % spec.requests.length];
      const req = http.request(
        {
          host: base.hostname,
          port: base.port,
          path: r.path,
          method: r.method,
          headers: { ...r.headers, ...(r.body ? { 'content-length': Buffer.byteLength(r.body) } : {}) },
          agent,
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - due);
            statusCodes[res.statusCode!] = (statusCodes[res.statusCode!] ?? 0) + 1;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(r.body);
    });
  const t0 = performance.now();
  const interval = 1000 / rate;
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = t0 + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending.push(one(i, due));
  }
  await Promise.all(pending);
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  const ok = Object.entries(statusCodes)
    .filter(([k]) => k.startsWith('2'))
    .reduce((sum, [, n]) => sum + n, 0);
  return {
    sent: total,
    ok,
    non2xx: latencies.length - ok,
    errors,
    timeouts: 0,
    seconds,
    okPerSec: ok / seconds,
    latencyMs: {
      mean: latencies.reduce((sum, x) => sum + x, 0) / (latencies.length || 1),
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      max: percentile(latencies, 100),
    },
    statusCodes,
  };
}

async function run(spec: LoadSpec, measured: boolean): Promise<LoadResult> {
  let cursor = 0;
  const requests: Request[] =
    spec.requests.length === 1 ? [{ ...spec.requests[0] }] : [{ setupRequest: (req) => ({ ...req, ...spec.requests[cursor++ % spec.requests.length] }) }];
  const latencies: number[] = [];
  const t0 = performance.now();
  // Wall time ends at the last answer: autocannon resolves on its one-second tick, which for a
  // fixed `amount` rounded every run up to whole seconds (2,000 events in 2.4 s counted as 3 s).
  let lastAnswer = t0;
  const instance = autocannon({
    url: spec.url,
    connections: spec.connections,
    ...(measured && spec.amount ? { amount: spec.amount } : { duration: measured ? spec.duration : spec.warmupSec }),
    timeout: 60,
    requests,
  });
  instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
    latencies.push(responseTime);
    lastAnswer = performance.now();
  });
  const r = await instance;
  const seconds = ((latencies.length ? lastAnswer : performance.now()) - t0) / 1000;
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, v.count]));
  const ok = Object.entries(statusCodes)
    .filter(([k]) => k.startsWith('2'))
    .reduce((s, [, n]) => s + n, 0);
  return {
    sent: latencies.length,
    ok,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    seconds,
    okPerSec: ok / seconds,
    latencyMs: {
      mean: latencies.reduce((s, x) => s + x, 0) / (latencies.length || 1),
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      max: percentile(latencies, 100),
    },
    statusCodes,
  };
}

process.once('message', async (spec: LoadSpec) => {
  try {
    const go = spec.rate ? pacedRun : run;
    if (spec.warmupSec && !spec.amount) await go(spec, false);
    const result = await go(spec, true);
    process.send!({ result }, () => process.exit(0));
  } catch (err) {
    process.send!({ error: (err as Error).stack ?? String(err) }, () => process.exit(1));
  }
});
