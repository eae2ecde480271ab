/** The autocannon side of lib/load.ts: receives one LoadSpec over IPC, answers with a LoadResult. */
import autocannon, { type Request } from 'autocannon';
import type { LoadResult, LoadSpec } from './load';
import { percentile } from './measure';

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
    ...(spec.rate ? { overallRate: spec.rate } : {}),
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
    if (spec.warmupSec && !spec.amount) await run(spec, false);
    const result = await run(spec, true);
    process.send!({ result }, () => process.exit(0));
  } catch (err) {
    process.send!({ error: (err as Error).stack ?? String(err) }, () => process.exit(1));
  }
});
