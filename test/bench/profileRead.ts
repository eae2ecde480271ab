/**
 * Profile helper (on demand, not part of npm run bench): our server alone under the api-read
 * load, so `node --cpu-prof --import tsx test/bench/profileRead.ts` shows only our request path.
 */
import { prepareBenchEnv } from './lib/env';
import { startOurServer } from './lib/servers';
import { fmtLoad, runLoad } from './lib/load';
import { tenItems } from './lib/fixtures';

const env = await prepareBenchEnv();
try {
  const { createTeam } = await import('../helpers/factories');
  const { createDraftInvoice } = await import('../helpers/invoiceFactory');
  const { tenant, admin, viewer } = await createTeam();
  const invoice = await createDraftInvoice(tenant, admin, { items: tenItems() });
  const ours = await startOurServer();
  const load = { connections: 20, url: ours.url, requests: [{ method: 'GET' as const, path: `/api/invoices/${invoice.id}`, headers: { authorization: `Bearer ${viewer.token}` } }] };
  await runLoad({ ...load, duration: 3 });
  // CPU time of this process per answered request: steadier than requests/s on a VM whose speed
  // drifts, and it counts only our side (PostgreSQL and Redis run in their own processes).
  const before = process.cpuUsage();
  const r = await runLoad({ ...load, duration: 10 });
  const cpu = process.cpuUsage(before);
  console.log(fmtLoad(r));
  console.log(`server CPU per request: ${((cpu.user + cpu.system) / r.sent).toFixed(0)} µs (user ${(cpu.user / r.sent).toFixed(0)}, system ${(cpu.system / r.sent).toFixed(0)})`);
  await ours.close();
} finally {
  await env.cleanup();
}
process.exit(0);
