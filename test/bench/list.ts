/**
 * list: GET /api/invoices with filters (status, from/to one month, page/limit 25) on the tenant
 * with 1,000,000 invoices; 40 different queries in turn. p95 latency of ours vs a bare Koa route
 * running the same two statements (count + page) with plain pg. No target given; figures only.
 */
import { barePool, bareApp, startBare, startOurServer } from './lib/servers';
import { bareListRoute, LIST_WHERE } from './lib/bareRoutes';
import { fmtLoad, runLoad, type LoadRequest } from './lib/load';
import type { Benchmark } from './lib/types';

/** The 40 filter variants (status, one month, page 1–5 of 25). */
export function listQueries(): Array<{ status: string; from: string; to: string; page: number; limit: number }> {
  return Array.from({ length: 40 }, (_, i) => {
    const m = String((i % 12) + 1).padStart(2, '0');
    return { status: i % 2 ? 'offen' : 'bezahlt', from: `2026-${m}-01`, to: `2026-${m}-28`, page: (i % 5) + 1, limit: 25 };
  });
}

export const toQuery = (q: ReturnType<typeof listQueries>[number]) =>
  new URLSearchParams(Object.entries(q).map(([k, v]): [string, string] => [k, String(v)])).toString();

export const list: Benchmark = {
  name: 'list',
  async run(ctx) {
    const seeded = await ctx.seeded();
    const { createUser } = await import('../helpers/factories');
    const viewer = await createUser({ id: seeded.tenantId }, 'viewer');
    const qs = listQueries();
    const load = { connections: ctx.connections, duration: ctx.duration, warmupSec: 2 };

    const ours = await startOurServer();
    const ourRequests: LoadRequest[] = qs.map((q) => ({
      method: 'GET',
      path: `/api/invoices?${toQuery(q)}`,
      headers: { authorization: `Bearer ${viewer.token}` },
    }));
    const o = await runLoad({ ...load, url: ours.url, requests: ourRequests }).finally(() => ours.close());
    ctx.log(`  ours:     ${fmtLoad(o)}`);

    const pool = barePool();
    const app = bareApp();
    app.use(bareListRoute(pool, seeded.tenantId));
    const bare = await startBare(app, pool);
    const b = await runLoad({ ...load, url: bare.url, requests: qs.map((q) => ({ method: 'GET', path: `/invoices?${toQuery(q)}` })) }).finally(() =>
      bare.close(),
    );
    ctx.log(`  baseline: ${fmtLoad(b)}`);

    // Where the time goes: the plans of the bare baseline's count and page, and of a credit-note
    // lookup by the page's ids (the list's statement does it per row, by primary key).
    const plain = barePool();
    try {
      const q = qs[1];
      const where = LIST_WHERE;
      const args = [seeded.tenantId, q.status, q.from, q.to];
      const { rows: page } = await plain.query(`select id from invoices where ${where} order by issue_date desc, created_at desc, id desc limit 25`, args);
      const statements: Array<[string, string, unknown[]]> = [
        ['count', `select count(*) from invoices where ${where}`, args],
        ['page', `select * from invoices where ${where} order by issue_date desc, created_at desc, id desc limit 25 offset 25`, args],
        [
          'credit notes of the page',
          `select id, related_invoice_id from invoices where tenant_id = $1 and type = 'gutschrift' and related_invoice_id = any($2) and deleted_at is null`,
          [seeded.tenantId, page.map((r) => r.id)],
        ],
      ];
      for (const [label, sql, params] of statements) {
        const { rows: plan } = await plain.query(`explain (analyze, buffers) ${sql}`, params);
        const lines = plan.map((r) => r['QUERY PLAN'] as string);
        ctx.log(
          `  EXPLAIN ANALYZE ${label}:\n${lines
            .filter((l) => !/^\s+Buffers|Planning|Execution Time/.test(l))
            .slice(0, 8)
            .map((l) => `      ${l.length > 160 ? `${l.slice(0, 157)}...` : l}`)
            .join('\n')}\n      ${lines.at(-1)}`,
        );
      }
    } finally {
      await plain.end();
    }

    return [
      {
        name: 'list p95',
        metric: 'ms',
        ours: o.latencyMs.p95,
        baseline: b.latencyMs.p95,
        better: 'lower',
        notes: [`${o.okPerSec.toFixed(0)} vs ${b.okPerSec.toFixed(0)} requests/s; p50 ${o.latencyMs.p50.toFixed(0)} vs ${b.latencyMs.p50.toFixed(0)} ms`],
      },
    ];
  },
};
