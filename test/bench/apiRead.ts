/**
 * api-read: authenticated GET /api/invoices/<id> (10 items) on our real server vs a bare Koa app
 * doing one indexed pg read of the same invoice row, measured in turn (lib/load.ts
 * interleavedLoads: the machine's drift during a run must not decide the ratio). Target: ours
 * ≥ 0.5 × the baseline's rate. Ours answers from its invoice view cache (the invoice does not
 * change during the run; docs/invoice-read-cache.md); the same read with the cache off is run
 * after, alone, and printed beside it.
 */
import { barePool, bareApp, startBare, startOurServer } from './lib/servers';
import { bareReadRoute } from './lib/bareRoutes';
import { fmtLoad, interleavedLoads, measuredLoad } from './lib/load';
import { tenItems } from './lib/fixtures';
import type { Benchmark } from './lib/types';

/** Runs `fn` with INVOICE_VIEW_CACHE_MB=0 (and an empty cache), then restores the setting. */
async function withViewCacheOff<T>(fn: () => Promise<T>): Promise<T> {
  const { reloadConfig } = await import('../../shared/config');
  const { invoiceViews } = await import('../../api/routes/invoices/viewCache');
  const before = process.env.INVOICE_VIEW_CACHE_MB;
  process.env.INVOICE_VIEW_CACHE_MB = '0';
  reloadConfig();
  invoiceViews.clear();
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.INVOICE_VIEW_CACHE_MB;
    else process.env.INVOICE_VIEW_CACHE_MB = before;
    reloadConfig();
  }
}

export const apiRead: Benchmark = {
  name: 'api-read',
  async run(ctx) {
    const { createTeam } = await import('../helpers/factories');
    const { createDraftInvoice } = await import('../helpers/invoiceFactory');
    const { tenant, admin, viewer } = await createTeam();
    const invoice = await createDraftInvoice(tenant, admin, { items: tenItems() });
    const load = { connections: ctx.connections, duration: ctx.duration, warmupSec: 2 };

    const ours = await startOurServer();
    const pool = barePool();
    const app = bareApp();
    app.use(bareReadRoute(pool, tenant.id));
    const bare = await startBare(app, pool);
    const oursSpec = {
      ...load,
      url: ours.url,
      requests: [{ method: 'GET' as const, path: `/api/invoices/${invoice.id}`, headers: { authorization: `Bearer ${viewer.token}` } }],
    };
    let measured: Awaited<ReturnType<typeof interleavedLoads>>;
    let uncached: Awaited<ReturnType<typeof measuredLoad>>;
    try {
      measured = await interleavedLoads(oursSpec, { ...load, url: bare.url, requests: [{ method: 'GET', path: `/invoices/${invoice.id}` }] });
      // The same read with the invoice view cache off (docs/invoice-read-cache.md): every request
      // builds the view, as a read of an invoice that changed since the last one does.
      uncached = await withViewCacheOff(() => measuredLoad({ ...oursSpec, duration: Math.max(2, Math.ceil(ctx.duration / 2)) }));
    } finally {
      await Promise.all([ours.close(), bare.close()]);
    }
    const [[o, oCpu], [b, bCpu]] = measured;
    const [u, uCpu] = uncached;
    ctx.log(`  ours:     ${fmtLoad(o)}, ${oCpu.toFixed(0)} µs CPU per request`);
    ctx.log(`  baseline: ${fmtLoad(b)}, ${bCpu.toFixed(0)} µs CPU per request`);
    ctx.log("  (in turn, four slices each: latency percentiles are the worst slice's)");
    ctx.log(`  ours, view cache off (after, alone): ${fmtLoad(u)}, ${uCpu.toFixed(0)} µs CPU per request (${(u.okPerSec / b.okPerSec).toFixed(2)} × baseline)`);

    return [
      {
        name: 'api-read',
        metric: 'requests/s',
        ours: o.okPerSec,
        baseline: b.okPerSec,
        better: 'higher',
        target: { of: 'ratio', value: 0.5, label: '≥ 0.5 × baseline' },
        notes: [
          `p99 ${o.latencyMs.p99.toFixed(1)} ms vs ${b.latencyMs.p99.toFixed(1)} ms`,
          `server CPU per request ${oCpu.toFixed(0)} µs vs ${bCpu.toFixed(0)} µs`,
          `view cache off: ${u.okPerSec.toFixed(0)} req/s, ${uCpu.toFixed(0)} µs CPU per request`,
          ...(o.non2xx ? [`ours non-2xx: ${o.non2xx}`] : []),
        ],
      },
    ];
  },
};
