/**
 * The bare baselines' routes, one definition each, used by the in-process benchmarks (bare Koa
 * app in the benchmark process) and by the deployed shape (lib/bareProcess.ts, a process of its
 * own): plain Koa + pg doing the least the same request needs.
 */
import crypto from 'node:crypto';
import type { Middleware } from 'koa';
import type pg from 'pg';
import { readBody } from './servers';
import type { tenItems } from './fixtures';

/** api-read: one indexed select of the invoice row. GET /invoices/<id> */
export function bareReadRoute(pool: pg.Pool, tenantId: string): Middleware {
  return async (c) => {
    const m = /^\/invoices\/([0-9a-f-]{36})$/.exec(c.path);
    if (!m) return;
    const { rows } = await pool.query('select * from invoices where tenant_id = $1 and id = $2', [tenantId, m[1]]);
    c.body = rows[0];
  };
}

/** api-write: parse, integer totals, insert invoice + items in one transaction. POST /invoices */
export function bareWriteRoute(pool: pg.Pool, tenantId: string): Middleware {
  return async (c) => {
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
        [tenantId, input.type, input.customerId, net / 100, tax / 100, (net + tax) / 100],
      );
      const id = rows[0].id as string;
      const values: unknown[] = [];
      const tuples = lines.map((l) => {
        values.push(tenantId, id, l.position, l.description, l.unit, l.quantity, l.unitPrice, l.taxRate, l.net / 100, l.tax / 100, (l.net + l.tax) / 100);
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
  };
}

export const LIST_WHERE = 'tenant_id = $1 and deleted_at is null and status = $2 and issue_date >= $3 and issue_date <= $4';

/** list: the same count + page SQL as the invoice list. GET /invoices?status&from&to&page&limit */
export function bareListRoute(pool: pg.Pool, tenantId: string): Middleware {
  return async (c) => {
    if (c.path !== '/invoices') return;
    const q = c.query as Record<string, string>;
    const args = [tenantId, q.status, q.from, q.to];
    const limit = Number(q.limit);
    const [count, page] = await Promise.all([
      pool.query(`select count(*) from invoices where ${LIST_WHERE}`, args),
      pool.query(`select * from invoices where ${LIST_WHERE} order by issue_date desc, created_at desc, id desc limit $5 offset $6`, [
        ...args,
        limit,
        (Number(q.page) - 1) * limit,
      ]),
    ]);
    c.body = { data: page.rows, pagination: { total: Number(count.rows[0].count) } };
  };
}

/** The table the bare webhook receiver stores raw events in (created by the benchmark before it starts). */
export const BARE_WEBHOOK_TABLE =
  'create table if not exists bench_webhook_baseline (id bigserial primary key, event_id text not null, body jsonb not null, received_at timestamptz not null default now())';

/** webhooks: verify the Stripe HMAC as ours does, store the raw event. POST /hook… */
export function bareWebhookRoute(pool: pg.Pool, secret: string): Middleware {
  return async (cx) => {
    if (cx.method !== 'POST' || !cx.path.startsWith('/hook')) return;
    const raw = await readBody(cx.req);
    const header = cx.get('stripe-signature');
    const t = Number(/(?:^|,)t=(\d+)/.exec(header)?.[1]);
    const expected = crypto.createHmac('sha256', secret).update(`${t}.`).update(raw).digest();
    const valid = [...header.matchAll(/(?:^|,)v1=([0-9a-f]{64})/g)].some((m) => crypto.timingSafeEqual(Buffer.from(m[1], 'hex'), expected));
    if (!valid || Math.abs(Date.now() / 1000 - t) > 300) {
      cx.status = 400;
      return;
    }
    const event = JSON.parse(raw.toString('utf8'));
    await pool.query('insert into bench_webhook_baseline (event_id, body) values ($1, $2)', [event.id, raw.toString('utf8')]);
    cx.body = { received: true };
  };
}

const SALES_STATUSES = ['offen', 'teilbezahlt', 'bezahlt', 'storniert'];

/**
 * The DATEV export's rows in the export's order (sales by issue date, incoming invoices by
 * invoice date, payments by date), each with the columns the export fills: the statements the
 * bookings need, without the export's rules (0 % split by category, ledger accounts, foreign
 * currency; the seeded tenant has none of them, so the rows are the same).
 */
const PLAIN_DATEV_SQL = [
  `select i.type, i.number, i.issue_date::text as d, coalesce(i.customer_snapshot->>'company', i.customer_snapshot->>'name') as partner,
          tb->>'taxRate' as rate, ((tb->>'net')::numeric + (tb->>'tax')::numeric)::text as gross, null as account
     from invoices i cross join lateral jsonb_array_elements(i.tax_breakdown) tb
    where i.tenant_id = $1 and i.deleted_at is null and i.type in ('rechnung', 'gutschrift') and i.status = any($4) and i.issue_date between $2 and $3
    order by i.issue_date, i.id`,
  `select i.type, i.invoice_number as number, i.invoice_date::text as d, s.name as partner,
          tb->>'taxRate' as rate, ((tb->>'net')::numeric + (tb->>'tax')::numeric)::text as gross, s.default_expense_account as account
     from invoices i left join suppliers s on s.id = i.supplier_id cross join lateral jsonb_array_elements(i.tax_breakdown) tb
    where i.tenant_id = $1 and i.deleted_at is null and i.type = 'eingangsrechnung' and i.status not in ('entwurf', 'storniert') and i.invoice_date between $2 and $3
    order by i.invoice_date, i.id`,
  `select 'payment' as type, coalesce(i.number, i.invoice_number) as number, p.date::text as d,
          coalesce(i.customer_snapshot->>'company', i.customer_snapshot->>'name') as partner, null as rate, p.amount::text as gross, null as account
     from payments p join invoices i on i.id = p.invoice_id
    where p.tenant_id = $1 and p.date between $2 and $3
    order by p.date, p.id`,
];

/** EKR (the seeded tenant is Austrian): revenue account and BU key per rate, as fixed strings. */
const PLAIN_REVENUE: Record<string, string> = { '20': '4000;"3"', '13': '4013;"4"', '10': '4010;"2"', '0': '4190;' };
const PLAIN_INPUT_KEY: Record<string, string> = { '20': '"9"', '13': '"6"', '10': '"8"', '0': '' };
/** DATEV EXTF: 125 columns; after Leistungsdatum (column 115) ten more separators. */
const PLAIN_TAIL = ';'.repeat(10);
const PLAIN_AFTER_TEXT = ';'.repeat(101);

/**
 * The DATEV export's rows (invoice × rate, payments) through a plain cursor as 125-column EXTF
 * lines written by string concatenation (the same filled fields: amount, S/H, WKZ, accounts, BU
 * key, Belegdatum, Belegfeld 1, Buchungstext, Leistungsdatum), each batch handed to `write` (a
 * download stream or a counter) as Latin-1 text.
 */
export async function plainCsvExport(
  client: pg.ClientBase,
  tenantId: string,
  start: string,
  end: string,
  write: (chunk: string) => void | Promise<void> = () => {},
): Promise<{ lines: number; bytes: number }> {
  let lines = 0;
  let bytes = 0;
  await client.query('begin isolation level repeatable read read only');
  try {
    for (const [k, sql] of PLAIN_DATEV_SQL.entries()) {
      await client.query(`declare c no scroll cursor for ${sql}`, k === 0 ? [tenantId, start, end, SALES_STATUSES] : [tenantId, start, end]);
      for (;;) {
        const { rows } = await client.query('fetch 2000 from c');
        if (!rows.length) break;
        let chunk = '';
        for (const r of rows) {
          const negative = r.gross.startsWith('-');
          const amount = (negative ? r.gross.slice(1) : r.gross).replace('.', ',');
          const sales = r.type === 'rechnung' || r.type === 'gutschrift';
          // S for sales and money in, H for purchases; a negative amount or a credit note the other way.
          const side = (r.type !== 'eingangsrechnung') !== (negative !== (r.type === 'gutschrift')) ? '"S"' : '"H"';
          const accounts =
            r.type === 'payment'
              ? '2800;2000;'
              : sales
                ? `2000;${PLAIN_REVENUE[r.rate] ?? '4190;'}`
                : `3300;${r.account ?? '7890'};${PLAIN_INPUT_KEY[r.rate] ?? ''}`;
          const text = r.number ? (r.partner ? `${r.number} ${r.partner}` : r.number) : (r.partner ?? '');
          chunk += `${amount};${side};"EUR";;;;${accounts};${r.d.slice(8, 10)}${r.d.slice(5, 7)};"${r.number ?? ''}";;;"${text}"${PLAIN_AFTER_TEXT}${PLAIN_TAIL}\r\n`;
          lines++;
        }
        bytes += Buffer.byteLength(chunk, 'latin1');
        await write(chunk);
      }
      await client.query('close c');
    }
  } finally {
    await client.query('commit');
  }
  return { lines, bytes };
}

/** DATEV: the plain cursor CSV streamed as a download. GET /datev?start&end */
export function bareDatevRoute(pool: pg.Pool, tenantId: string): Middleware {
  return async (c) => {
    if (c.path !== '/datev') return;
    const { start, end } = c.query as Record<string, string>;
    const client = await pool.connect();
    c.status = 200;
    c.set('Content-Type', 'text/csv');
    c.respond = false;
    const res = c.res;
    res.writeHead(200, { 'content-type': 'text/csv' });
    try {
      await plainCsvExport(client, tenantId, start, end, (chunk) =>
        res.write(chunk, 'latin1') ? undefined : new Promise<void>((resolve) => res.once('drain', () => resolve())),
      );
    } finally {
      client.release();
      res.end();
    }
  };
}
