/**
 * Profile helper (on demand, not part of npm run bench): our server alone accepting the
 * webhook-ingest deliveries (no worker), so
 * `node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx test/bench/profileWebhook.ts` shows only
 * the accept path. BENCH_WEBHOOK_EVENTS sets the number of deliveries (default 10,000).
 */
import { prepareBenchEnv } from './lib/env';
import { startOurServer } from './lib/servers';
import { fmtLoad, runLoad } from './lib/load';
import { stripeDeliveriesFor } from './webhookIngest';

const env = await prepareBenchEnv();
try {
  const n = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 10_000);
  const { createTeam } = await import('../helpers/factories');
  const { admin } = await createTeam();
  const ours = await startOurServer();
  const { requests } = await stripeDeliveriesFor(ours.url, admin.token, n);
  const cpu0 = process.cpuUsage();
  const r = await runLoad({ url: ours.url, connections: 20, amount: n, requests });
  const cpu = process.cpuUsage(cpu0);
  console.log(
    `${fmtLoad(r)}, ${((cpu.user + cpu.system) / n).toFixed(0)} µs CPU per delivery (user ${(cpu.user / n).toFixed(0)}, system ${(cpu.system / n).toFixed(0)})`,
  );
  await ours.close();
} finally {
  await env.cleanup();
}
process.exit(0);
