/**
 * Profile helper (on demand, not part of npm run bench): our server alone under the api-read
 * load, so `node --cpu-prof --import tsx test/bench/profileRead.ts` shows only our request path.
 */
import { prepareBenchEnv } from './lib/env';
import { startOurServer } from './lib/servers';
import { fmtLoad, measuredLoad } from './lib/load';
import { tenItems } from './lib/fixtures';

const env = await prepareBenchEnv();
try {
  const { createTeam } = await import('../helpers/factories');
  const { createDraftInvoice } = await import('../helpers/invoiceFactory');
  const { tenant, admin, viewer } = await createTeam();
  const invoice = await createDraftInvoice(tenant, admin, { items: tenItems() });
  const ours = await startOurServer();
  const [r, cpu, split] = await measuredLoad({
    connections: 20,
    duration: 10,
    warmupSec: 3,
    url: ours.url,
    requests: [{ method: 'GET', path: `/api/invoices/${invoice.id}`, headers: { authorization: `Bearer ${viewer.token}` } }],
  });
  console.log(`${fmtLoad(r)}, ${cpu.toFixed(0)} µs CPU per request (user ${split.userUs.toFixed(0)}, system ${split.systemUs.toFixed(0)})`);
  await ours.close();
} finally {
  await env.cleanup();
}
process.exit(0);
