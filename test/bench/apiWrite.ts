/**
 * api-write: POST /api/invoices with 10 items (member token, no Idempotency-Key) on our real
 * server vs a bare Koa route that parses the same JSON and inserts the invoice and its 10 items
 * with plain SQL in one transaction. Target: ours ≥ 500 requests/s (absolute, 2 cores).
 */
import { barePool, bareApp, startBare, startOurServer } from './lib/servers';
import { bareWriteRoute } from './lib/bareRoutes';
import { fmtLoad, measuredLoad } from './lib/load';
import { tenItems } from './lib/fixtures';
import type { Benchmark } from './lib/types';

export const apiWrite: Benchmark = {
  name: 'api-write',
  async run(ctx) {
    const { createTeam } = await import('../helpers/factories');
    const { createCustomer } = await import('../helpers/invoiceFactory');
    const { tenant, member } = await createTeam();
    const customer = await createCustomer(tenant, { address: 'Landstraße 12\n4020 Linz', vatId: 'ATU87654321' });
    const body = JSON.stringify({ type: 'rechnung', customerId: customer.id, items: tenItems() });
    const load = { connections: ctx.connections, duration: ctx.duration, warmupSec: 2 };
    const json = { 'content-type': 'application/json' };

    const ours = await startOurServer();
    const [o, oCpu] = await measuredLoad({
      ...load,
      url: ours.url,
      requests: [{ method: 'POST', path: '/api/invoices', headers: { ...json, authorization: `Bearer ${member.token}` }, body }],
    }).finally(() => ours.close());
    ctx.log(`  ours:     ${fmtLoad(o)}, ${oCpu.toFixed(0)} µs CPU per request`);

    const pool = barePool();
    const app = bareApp();
    app.use(bareWriteRoute(pool, tenant.id));
    const bare = await startBare(app, pool);
    const [b, bCpu] = await measuredLoad({ ...load, url: bare.url, requests: [{ method: 'POST', path: '/invoices', headers: json, body }] }).finally(() =>
      bare.close(),
    );
    ctx.log(`  baseline: ${fmtLoad(b)}, ${bCpu.toFixed(0)} µs CPU per request`);

    return [
      {
        name: 'api-write',
        metric: 'requests/s',
        ours: o.okPerSec,
        baseline: b.okPerSec,
        better: 'higher',
        target: { of: 'ours', value: 500, label: '≥ 500/s' },
        notes: [
          `server CPU per request ${oCpu.toFixed(0)} µs vs ${bCpu.toFixed(0)} µs`,
          ...(o.non2xx ? [`ours non-2xx: ${JSON.stringify(o.statusCodes)}`] : []),
        ],
      },
      { name: 'api-write p99', metric: 'ms', ours: o.latencyMs.p99, baseline: b.latencyMs.p99, better: 'lower' },
    ];
  },
};
