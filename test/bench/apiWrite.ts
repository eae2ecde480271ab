/**
 * api-write: POST /api/invoices with 10 items (member token, no Idempotency-Key) on our real
 * server vs a bare Koa route that parses the same JSON and inserts the invoice and its 10 items
 * with plain SQL in one transaction. Target: ours ≥ 500 requests/s (absolute, 2 cores).
 */
import { barePool, bareApp, readBody, startBare, startOurServer } from './lib/servers';
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
    app.use(async (c) => {
      if (c.method !== 'POST' || c.path !== '/invoices') return;
      const input = JSON.parse((await readBody(c.req)).toString('utf8')) as { type: string; customerId: string; items: ReturnType<typeof tenItems> };
      // Cents in integers: enough for a baseline (the service uses decimal.js and rate groups).
      const lines = input.items.map((it, i) => {
        const net = Math.round(it.quantity * Math.round(Number(it.unitPrice) * 100));
        const tax = Math.round((net * Number(it.taxRate)) / 100);
        return { ...it, position: i + 1, net, tax };
      });
      const net = lines.reduce((s, l) => s + l.net, 0);
      const tax = lines.reduce((s, l) => s + l.tax, 0);
      const client = await pool.connect();
      try {
        await client.query('begin');
        const { rows } = await client.query(
          `insert into invoices (tenant_id, type, status, customer_id, issue_date, total_net, total_tax, total_gross, tax_breakdown)
           values ($1, $2, 'entwurf', $3, current_date, $4, $5, $6, '[]') returning id`,
          [tenant.id, input.type, input.customerId, net / 100, tax / 100, (net + tax) / 100],
        );
        const id = rows[0].id as string;
        const values: unknown[] = [];
        const tuples = lines.map((l) => {
          values.push(tenant.id, id, l.position, l.description, l.unit, l.quantity, l.unitPrice, l.taxRate, l.net / 100, l.tax / 100, (l.net + l.tax) / 100);
          const b = values.length - 11;
          return `(${Array.from({ length: 11 }, (_, j) => `$${b + j + 1}`).join(', ')})`;
        });
        await client.query(
          `insert into invoice_items (tenant_id, invoice_id, position, description, unit, quantity, unit_price, tax_rate, net_amount, tax_amount, gross_amount)
           values ${tuples.join(', ')}`,
          values,
        );
        await client.query('commit');
        c.status = 201;
        c.body = { id };
      } catch (err) {
        await client.query('rollback');
        throw err;
      } finally {
        client.release();
      }
    });
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
