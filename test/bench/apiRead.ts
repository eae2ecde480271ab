/**
 * api-read: authenticated GET /api/invoices/<id> (10 items) on our real server vs a bare Koa app
 * doing one indexed pg read of the same invoice row, measured in turn (lib/load.ts
 * interleavedLoads: the machine's drift during a run must not decide the ratio). Target: ours
 * ≥ 0.5 × the baseline's rate.
 */
import { barePool, bareApp, startBare, startOurServer } from './lib/servers';
import { fmtLoad, interleavedLoads } from './lib/load';
import { tenItems } from './lib/fixtures';
import type { Benchmark } from './lib/types';

export const apiRead: Benchmark = {
  name: 'api-read',
  needsDb: true,
  async run(ctx) {
    const { createTeam } = await import('../helpers/factories');
    const { createDraftInvoice } = await import('../helpers/invoiceFactory');
    const { tenant, admin, viewer } = await createTeam();
    const invoice = await createDraftInvoice(tenant, admin, { items: tenItems() });
    const load = { connections: ctx.connections, duration: ctx.duration, warmupSec: 2 };

    const ours = await startOurServer();
    const pool = barePool();
    const app = bareApp();
    app.use(async (c) => {
      const m = /^\/invoices\/([0-9a-f-]{36})$/.exec(c.path);
      if (!m) return;
      const { rows } = await pool.query('select * from invoices where tenant_id = $1 and id = $2', [tenant.id, m[1]]);
      c.body = rows[0];
    });
    const bare = await startBare(app, pool);
    const [[o, oCpu], [b, bCpu]] = await interleavedLoads(
      { ...load, url: ours.url, requests: [{ method: 'GET', path: `/api/invoices/${invoice.id}`, headers: { authorization: `Bearer ${viewer.token}` } }] },
      { ...load, url: bare.url, requests: [{ method: 'GET', path: `/invoices/${invoice.id}` }] },
    ).finally(() => Promise.all([ours.close(), bare.close()]));
    ctx.log(`  ours:     ${fmtLoad(o)}, ${oCpu.toFixed(0)} µs CPU per request`);
    ctx.log(`  baseline: ${fmtLoad(b)}, ${bCpu.toFixed(0)} µs CPU per request`);
    ctx.log('  (in turn, four slices each: latency percentiles are the worst slice\'s)');

    return [
      {
        name: 'api-read',
        metric: 'requests/s',
        ours: o.okPerSec,
        baseline: b.okPerSec,
        better: 'higher',
        target: { of: 'ratio', value: 0.5, label: '≥ 0.5 × baseline' },
        notes: [`p99 ${o.latencyMs.p99.toFixed(1)} ms vs ${b.latencyMs.p99.toFixed(1)} ms`, `server CPU per request ${oCpu.toFixed(0)} µs vs ${bCpu.toFixed(0)} µs`, ...(o.non2xx ? [`ours non-2xx: ${o.non2xx}`] : [])],
      },
    ];
  },
};
