/**
 * Profile helper (on demand, not part of npm run bench): our server alone under the list load
 * (the 40 filter variants of list.ts) on a seeded tenant, so
 * `node --cpu-prof --import tsx test/bench/profileList.ts [invoices]` shows only the list path.
 */
import { prepareBenchEnv } from './lib/env';
import { startOurServer } from './lib/servers';
import { fmtLoad, measuredLoad } from './lib/load';
import { seedInvoices } from './lib/seed';
import { listQueries, toQuery } from './list';

const total = Number(process.argv[2] ?? 20_000);
const env = await prepareBenchEnv();
try {
  const { createUser } = await import('../helpers/factories');
  const { db } = await import('../../shared/db');
  const seeded = await seedInvoices(env.url, db(), total);
  const viewer = await createUser({ id: seeded.tenantId }, 'viewer');
  const ours = await startOurServer();
  const [r, cpu, split] = await measuredLoad({
    connections: Number(process.env.BENCH_CONNECTIONS ?? 20),
    duration: 10,
    warmupSec: 3,
    url: ours.url,
    requests: listQueries().map((q) => ({ method: 'GET', path: `/api/invoices?${toQuery(q)}`, headers: { authorization: `Bearer ${viewer.token}` } })),
  });
  console.log(`${fmtLoad(r)}, ${cpu.toFixed(0)} µs CPU per request (user ${split.userUs.toFixed(0)}, system ${split.systemUs.toFixed(0)})`);
  await ours.close();
} finally {
  await env.cleanup();
}
process.exit(0);
