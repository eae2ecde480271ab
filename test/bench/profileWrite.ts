/**
 * Profile helper (on demand, not part of npm run bench): our server alone under the api-write
 * load, so `node --cpu-prof --import tsx test/bench/profileWrite.ts` shows only our create path.
 */
import { prepareBenchEnv } from './lib/env';
import { startOurServer } from './lib/servers';
import { fmtLoad, measuredLoad } from './lib/load';
import { tenItems } from './lib/fixtures';

const env = await prepareBenchEnv();
try {
  const { createTeam } = await import('../helpers/factories');
  const { createCustomer } = await import('../helpers/invoiceFactory');
  const { tenant, member } = await createTeam();
  const customer = await createCustomer(tenant, { address: 'Landstraße 12\n4020 Linz', vatId: 'ATU87654321' });
  const body = JSON.stringify({ type: 'rechnung', customerId: customer.id, items: tenItems() });
  const ours = await startOurServer();
  const [r, cpu, split] = await measuredLoad({
    connections: 20,
    duration: 10,
    warmupSec: 3,
    url: ours.url,
    requests: [{ method: 'POST', path: '/api/invoices', headers: { 'content-type': 'application/json', authorization: `Bearer ${member.token}` }, body }],
  });
  console.log(`${fmtLoad(r)}, ${cpu.toFixed(0)} µs CPU per request (user ${split.userUs.toFixed(0)}, system ${split.systemUs.toFixed(0)})`);
  await ours.close();
} finally {
  await env.cleanup();
}
process.exit(0);
