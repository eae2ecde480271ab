/**
 * Profile helper (on demand, not part of npm run bench): our server alone under the api-write
 * load, so `node --cpu-prof --import tsx test/bench/profileWrite.ts > /tmp/write.log` shows only
 * our create path. It runs in the deployed shape's settings (NODE_ENV=production, LOG_LEVEL=info:
 * the access log goes to stdout, so send stdout to a file; rate limits on but high) unless
 * PROFILE_SHAPE=dev. The result is printed to stderr: our process's CPU per request, PostgreSQL's
 * (utime + stime of the backends connected to the bench database over the measured run)
 * and, with PROFILE_QUERIES=1, the SQL statements per request (pg's Client.query counted, which
 * adds a little CPU of its own). PROFILE_BARE=1 then measures the bare baseline (lib/bareRoutes.ts) in
 * this process the same way.
 */
import fs from 'node:fs';
import { prepareBenchEnv } from './lib/env';
import { bareApp, barePool, startBare, startOurServer } from './lib/servers';
import { bareWriteRoute } from './lib/bareRoutes';
import { fmtLoad, runLoad, type LoadSpec } from './lib/load';
import { tenItems } from './lib/fixtures';
import { productionSecrets } from './lib/procfile';

if (process.env.PROFILE_SHAPE !== 'dev') {
  Object.assign(process.env, { NODE_ENV: 'production', LOG_LEVEL: 'info', ...productionSecrets() });
}

/** utime + stime in µs of the PostgreSQL backends connected to `dbName` (the pool's persist across the run). */
function postgresCpuUs(dbName: string): number {
  let ticks = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (!stat.includes('(postgres)') || !fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(` ${dbName} `)) continue;
      const f = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // ended meanwhile
    }
  }
  return ticks * 10_000; // USER_HZ 100
}

const statements = new Map<string, number>();
if (process.env.PROFILE_QUERIES === '1') {
  const pg = (await import('pg')).default;
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    const q = args[0] as string | { text?: string; name?: string };
    const text = typeof q === 'string' ? q : (q?.text ?? q?.name ?? '?');
    const key = text.replace(/\s+/g, ' ').slice(0, 90);
    statements.set(key, (statements.get(key) ?? 0) + 1);
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
}

const env = await prepareBenchEnv();
try {
  const { createTeam } = await import('../helpers/factories');
  const { createCustomer } = await import('../helpers/invoiceFactory');
  const { tenant, member } = await createTeam();
  const customer = await createCustomer(tenant, { address: 'Landstraße 12\n4020 Linz', vatId: 'ATU87654321' });
  const body = JSON.stringify({ type: 'rechnung', customerId: customer.id, items: tenItems() });
  const measure = async (label: string, url: string, request: LoadSpec['requests'][number]) => {
    const spec: LoadSpec = {
      connections: Number(process.env.BENCH_CONNECTIONS || 20),
      duration: Number(process.env.BENCH_DURATION || 10),
      url,
      requests: [request],
    };
    await runLoad({ ...spec, duration: 3 });
    statements.clear();
    const cpu0 = process.cpuUsage();
    const pg0 = postgresCpuUs(env.dbName);
    const r = await runLoad(spec);
    const pgUs = postgresCpuUs(env.dbName) - pg0;
    const cpu = process.cpuUsage(cpu0);
    const n = Math.max(1, r.sent);
    console.error(
      `${label}: ${fmtLoad(r)}\n  web ${((cpu.user + cpu.system) / n).toFixed(0)} µs CPU per request (user ${(cpu.user / n).toFixed(0)}, system ${(cpu.system / n).toFixed(0)}); postgres ${(pgUs / n).toFixed(0)} µs`,
    );
    if (statements.size) {
      const total = [...statements.values()].reduce((a, b) => a + b, 0);
      console.error(`  SQL statements per request: ${(total / n).toFixed(2)}`);
      for (const [k, c] of [...statements].sort((a, b) => b[1] - a[1])) console.error(`    ${(c / n).toFixed(2)}  ${k}`);
    }
  };
  const json = { 'content-type': 'application/json' };
  const ours = await startOurServer();
  await measure('ours', ours.url, { method: 'POST', path: '/api/invoices', headers: { ...json, authorization: `Bearer ${member.token}` }, body }).finally(() =>
    ours.close(),
  );
  if (process.env.PROFILE_BARE === '1') {
    // The bare baseline in this process afterwards, measured the same way (its pg Pool's backends too).
    const pool = barePool();
    const app = bareApp();
    app.use(bareWriteRoute(pool, tenant.id));
    const bare = await startBare(app, pool);
    await measure('bare', bare.url, { method: 'POST', path: '/invoices', headers: json, body }).finally(() => bare.close());
  }
} finally {
  await env.cleanup();
}
process.exit(0);
