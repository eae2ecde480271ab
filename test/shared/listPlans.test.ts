import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../shared/db';
import { createTenant } from '../helpers/factories';
import { listInvoices, type InvoiceListFilters } from '../../shared/queries/invoices';

/**
 * The plans of the invoice list (docs/lists.md, "Indexes"): on a seeded tenant, every filter
 * variant at page 1, a deep page and a cursor reads the page's keys from an index in the list's
 * order — no Seq Scan, no Sort over the matching rows (the final sort of the ≤ 101 keys is fine),
 * an Index Only Scan for the keys of a deep page — and the total from the counters, in the same
 * statement as the page (docs/lists.md, "A page in one statement"). The plans
 * are those of the statements listInvoices() actually sends (captured from knex).
 */
const N = 30_000;
let tenantId: string;
let customerId: string;
let supplierId: string;

beforeAll(async () => {
  const k = db();
  tenantId = (await createTenant()).id;
  const other = (await createTenant()).id;
  customerId = (await k('customers').insert({ tenantId, name: 'Kunde' }).returning('id'))[0].id;
  supplierId = (await k('suppliers').insert({ tenantId, name: 'Lieferant' }).returning('id'))[0].id;
  const otherCustomer = (await k('customers').insert({ tenantId, name: 'Andere' }).returning('id'))[0].id;
  await k.raw(
    `insert into invoices (tenant_id, type, status, customer_id, supplier_id, issue_date, total_net, total_tax, total_gross, tax_breakdown)
     select ?, case when g % 10 = 0 then 'eingangsrechnung' when g % 50 = 1 then 'gutschrift' else 'rechnung' end,
            case when g % 10 = 3 then 'bezahlt' when g % 101 = 0 then 'entwurf' else 'offen' end,
            case when g % 10 = 0 then null when g % 7 = 0 then ?::uuid else ?::uuid end,
            case when g % 10 = 0 then ?::uuid end,
            date '2026-01-01' + (g % 365), 1, 0, 1, '[]'
       from generate_series(1, ?::int) g`,
    [tenantId, customerId, otherCustomer, supplierId, N],
  );
  await k.raw(
    `insert into invoices (tenant_id, type, status, issue_date, total_net, total_tax, total_gross, tax_breakdown)
     select ?, 'rechnung', 'offen', date '2026-01-01' + (g % 365), 1, 0, 1, '[]' from generate_series(1, ?::int) g`,
    [other, N / 3],
  );
  // Other tenants' counter rows, as a shared database has them (else a scan of the whole small table wins).
  await k.raw(
    `insert into invoice_day_counts (tenant_id, type, status, issue_date, slot, n)
     select t, 'rechnung', s, date '2026-01-01' + d, 0, 5
       from (select gen_random_uuid() t from generate_series(1, 200)) ts, generate_series(0, 364) d, unnest(array['offen', 'bezahlt']) s`,
  );
  await k.raw(
    `insert into invoice_party_counts (tenant_id, party, party_id, type, status, issue_date, slot, n)
     select t, 'c', gen_random_uuid(), 'rechnung', 'offen', date '2026-01-01' + d, 0, 5
       from (select gen_random_uuid() t from generate_series(1, 200)) ts, generate_series(0, 364) d`,
  );
  // As autovacuum leaves a table that is mostly read: statistics and the visibility map (index-only scans).
  await k.raw('vacuum analyze invoices, invoice_day_counts, invoice_party_counts');
}, 120_000);

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Subplan Name'?: string;
  Alias?: string;
  Plans?: PlanNode[];
}

/** Visits every node with its ancestors; a CTE's plan starts afresh (it runs before, not under, its parent). */
const walk = (n: PlanNode, f: (n: PlanNode, parents: PlanNode[]) => void, parents: PlanNode[] = []) => {
  const own = n['Subplan Name'] ? [] : parents;
  f(n, own);
  for (const c of n.Plans ?? []) walk(c, f, [...own, n]);
};

/** The statements listInvoices sends for f, each with its plan. */
async function plans(f: Partial<InvoiceListFilters>) {
  const k = db();
  const sent: Array<{ sql: string; bindings: unknown[] }> = [];
  const listener = (q: { sql: string; bindings?: unknown[] }) => sent.push({ sql: q.sql, bindings: q.bindings ?? [] });
  k.on('query', listener);
  let res: Awaited<ReturnType<typeof listInvoices>>;
  try {
    res = await listInvoices(k, tenantId, { page: 1, limit: 25, ...f });
  } finally {
    k.off('query', listener);
  }
  const out: Array<{ sql: string; plan: PlanNode }> = [];
  for (const s of sent.filter((x) => /from "invoices"|invoice_(day|party)_counts/.test(x.sql))) {
    const sql = s.sql.replace(/\$\d+/g, '?');
    const { rows } = await k.raw(`explain (format json) ${sql}`, s.bindings as never[]);
    out.push({ sql: s.sql, plan: rows[0]['QUERY PLAN'][0].Plan });
  }
  return { res, out };
}

const VARIANTS: Array<[string, Partial<InvoiceListFilters>]> = [
  ['no filter', {}],
  ['status', { status: 'offen' }],
  ['type', { type: 'eingangsrechnung' }],
  ['type + status', { type: 'rechnung', status: 'bezahlt' }],
  ['from/to', { from: '2026-03-01', to: '2026-03-31' }],
  ['status + from/to', { status: 'bezahlt', from: '2026-03-01', to: '2026-03-31' }],
  ['type + status + from/to', { type: 'rechnung', status: 'offen', from: '2026-06-01', to: '2026-06-30' }],
  ['type + from/to', { type: 'gutschrift', from: '2026-01-01', to: '2026-06-30' }],
];

describe('invoice list plans: an index in the list order for every filter variant', () => {
  const cases = () =>
    [
      ...VARIANTS,
      ['customerId', { customerId }],
      ['customerId + status', { customerId, status: 'bezahlt' }],
      ['customerId + from/to', { customerId, from: '2026-03-01', to: '2026-03-31' }],
      ['supplierId', { supplierId }],
      ['supplierId + type + status', { supplierId, type: 'eingangsrechnung', status: 'offen' }],
    ] as Array<[string, Partial<InvoiceListFilters>]>;

  it('page 1, a deep page and a cursor: no Seq Scan, no Sort over the matching rows, deep keys index-only', async () => {
    const problems: string[] = [];
    for (const [name, f] of cases()) {
      const first = await plans(f);
      const cursor = first.res.pagination.nextCursor ?? undefined;
      const deepPage = Math.max(1, Math.min(40, first.res.pagination.totalPages));
      const runs = [
        ['page 1', first],
        [`page ${deepPage}`, await plans({ ...f, page: deepPage })],
        ...(cursor ? [['cursor', await plans({ ...f, cursor })] as const] : []),
      ] as const;
      for (const [label, { out, res }] of runs) {
        // One statement (page and total); an empty page asks for its total on its own.
        expect(out.length, `${name} ${label}: statements`).toBe(res.data.length ? 1 : 2);
        for (const { sql, plan } of out) {
          walk(plan, (n, parents) => {
            if (n['Node Type'] === 'Seq Scan' && /invoice/.test(n['Relation Name'] ?? '')) problems.push(`${name} ${label}: Seq Scan on ${n['Relation Name']}`);
            if (n['Node Type'].includes('Bitmap') && n['Relation Name'] === 'invoices') problems.push(`${name} ${label}: bitmap scan of invoices`);
            // A Sort above a scan of the invoices other than the page's lookups by primary key sorts the matching rows.
            const isListScan = n['Relation Name'] === 'invoices' && n['Index Name'] !== 'invoices_pkey';
            // Outside the keys' CTE the page's rows are fetched by id.
            if (isListScan && n.Alias === 'i') problems.push(`${name} ${label}: page rows by ${n['Index Name']}`);
            if (isListScan && parents.some((p) => p['Node Type'] === 'Sort' || p['Node Type'] === 'Incremental Sort'))
              problems.push(`${name} ${label}: Sort over ${n['Index Name'] ?? n['Node Type']}`);
            if (isListScan && label !== 'page 1' && /materialized/i.test(sql) && n['Node Type'] !== 'Index Only Scan')
              problems.push(`${name} ${label}: keys by ${n['Node Type']} on ${n['Index Name']}`);
          });
        }
      }
    }
    expect(problems).toEqual([]);
  }, 120_000);

  it('the total comes from the counters and equals count(*)', async () => {
    for (const [name, f] of cases()) {
      const { res, out } = await plans(f);
      expect(
        out.some((s) => /invoice_(day|party)_counts/.test(s.sql)),
        name,
      ).toBe(true);
      expect(
        out.some((s) => /count\(\*\)/.test(s.sql)),
        name,
      ).toBe(false);
      const q = db()('invoices').where({ tenantId }).whereNull('deletedAt');
      for (const [col, v] of Object.entries(f)) {
        if (col === 'from') q.where('issueDate', '>=', v as string);
        else if (col === 'to') q.where('issueDate', '<=', v as string);
        else q.where(col, v as string);
      }
      const [{ count }] = await q.count<{ count: string }[]>({ count: '*' });
      expect(res.pagination.total, name).toBe(Number(count));
    }
  }, 60_000);
});
