import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { db } from '../../shared/db';
import { createTenant } from '../helpers/factories';
import { listInvoices } from '../../shared/queries/invoices';
import { listSuppliers } from '../../shared/queries/suppliers';
import { listCustomers } from '../../shared/queries/customers';

/**
 * The list counters (migration 20261127193517, docs/lists.md) equal count(*) after random writes
 * of every kind — inserts of one and several rows, status, date, type and party changes, soft
 * delete, restore, hard delete, ordinary edits — run as concurrent transactions, some rolled back,
 * some lost to deadlocks; and the totals the list queries answer equal count(*) for random filters.
 */
const TYPES = ['rechnung', 'angebot', 'gutschrift', 'eingangsrechnung'] as const;
const STATUSES = ['entwurf', 'offen', 'teilbezahlt', 'bezahlt', 'storniert'] as const;
const DAYS = ['2026-01-01', '2026-01-02', '2026-01-03', '2026-02-01'];

const pick = fc.nat(1000);
const party = fc.option(fc.nat(2), { nil: null });
const newRow = fc.record({
  type: fc.constantFrom(...TYPES),
  status: fc.constantFrom(...STATUSES),
  day: fc.nat(DAYS.length - 1),
  customer: party,
  supplier: party,
  deleted: fc.boolean(),
});
const op = fc.oneof(
  fc.record({ k: fc.constant('insert' as const), rows: fc.array(newRow, { minLength: 1, maxLength: 3 }) }),
  fc.record({ k: fc.constant('status' as const), at: pick, status: fc.constantFrom(...STATUSES) }),
  fc.record({ k: fc.constant('bulkStatus' as const), from: fc.constantFrom(...STATUSES), to: fc.constantFrom(...STATUSES) }),
  fc.record({ k: fc.constant('day' as const), at: pick, day: fc.nat(DAYS.length - 1) }),
  fc.record({ k: fc.constant('type' as const), at: pick, type: fc.constantFrom(...TYPES) }),
  fc.record({ k: fc.constant('customer' as const), at: pick, customer: party }),
  fc.record({ k: fc.constant('softDelete' as const), at: pick }),
  fc.record({ k: fc.constant('restore' as const), at: pick }),
  fc.record({ k: fc.constant('hardDelete' as const), at: pick }),
  fc.record({ k: fc.constant('touch' as const), at: pick }),
  fc.record({
    k: fc.constant('party' as const),
    table: fc.constantFrom('customers', 'suppliers'),
    act: fc.constantFrom('insert', 'softDelete', 'restore', 'delete'),
  }),
);
type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

interface World {
  tenantId: string;
  customers: string[];
  suppliers: string[];
}

async function world(): Promise<World> {
  const t = await createTenant();
  const customers = await db()('customers')
    .insert([0, 1, 2].map((i) => ({ tenantId: t.id, name: `K${i}` })))
    .returning('id');
  const suppliers = await db()('suppliers')
    .insert([0, 1, 2].map((i) => ({ tenantId: t.id, name: `L${i}` })))
    .returning('id');
  return { tenantId: t.id, customers: customers.map((r) => r.id), suppliers: suppliers.map((r) => r.id) };
}

async function run(trx: Knex.Transaction, w: World, o: Op): Promise<void> {
  const { tenantId } = w;
  const ids: string[] = (await trx('invoices').where({ tenantId }).orderBy('id').select('id')).map((r) => r.id);
  const target = 'at' in o && ids.length ? ids[o.at % ids.length] : null;
  const one = () => trx('invoices').where({ tenantId, id: target });
  switch (o.k) {
    case 'insert':
      await trx('invoices').insert(
        o.rows.map((r) => ({
          tenantId,
          type: r.type,
          status: r.status,
          issueDate: DAYS[r.day],
          customerId: r.customer === null ? null : w.customers[r.customer],
          supplierId: r.supplier === null ? null : w.suppliers[r.supplier],
          deletedAt: r.deleted ? new Date() : null,
          totalNet: '1.00',
          totalTax: '0.00',
          totalGross: '1.00',
          taxBreakdown: JSON.stringify([]),
        })),
      );
      return;
    case 'bulkStatus':
      await trx('invoices').where({ tenantId, status: o.from }).update({ status: o.to });
      return;
    case 'party': {
      const rows = await trx(o.table).where({ tenantId }).orderBy('id').select('id', 'deletedAt');
      if (o.act === 'insert') await trx(o.table).insert({ tenantId, name: `P${randomUUID().slice(0, 6)}` });
      const live = rows.find((r) => !r.deletedAt);
      const dead = rows.find((r) => r.deletedAt);
      if (o.act === 'softDelete' && live) await trx(o.table).where({ id: live.id }).update({ deletedAt: new Date() });
      if (o.act === 'restore' && dead) await trx(o.table).where({ id: dead.id }).update({ deletedAt: null });
      // Only parties no invoice references (the three of world() stay): a hard delete as the purge does.
      if (o.act === 'delete') {
        const spare = rows.filter((r) => !w.customers.includes(r.id) && !w.suppliers.includes(r.id));
        if (spare.length) await trx(o.table).where({ id: spare[0].id }).delete();
      }
      return;
    }
  }
  if (!target) return;
  if (o.k === 'status') await one().update({ status: o.status });
  if (o.k === 'day') await one().update({ issueDate: DAYS[o.day] });
  if (o.k === 'type') await one().update({ type: o.type });
  if (o.k === 'customer') await one().update({ customerId: o.customer === null ? null : w.customers[o.customer] });
  if (o.k === 'softDelete') await one().update({ deletedAt: new Date() });
  if (o.k === 'restore') await one().update({ deletedAt: null });
  if (o.k === 'hardDelete') await one().delete();
  if (o.k === 'touch') await one().update({ notes: randomUUID(), updatedAt: new Date() });
}

/** Counter rows (summed over slots, zeros dropped) and count(*) over the rows, in the same shape. */
async function compare(w: World) {
  const k = db();
  const t = w.tenantId;
  const norm = (rows: Array<Record<string, unknown>>) =>
    rows
      .map((r) =>
        Object.values(r)
          .map((v) => (v instanceof Date ? v.toISOString().slice(0, 10) : String(v)))
          .join('|'),
      )
      .sort();
  const day = await k.raw(
    'select type, status, issue_date::text, sum(n)::int from invoice_day_counts where tenant_id = ? group by 1, 2, 3 having sum(n) <> 0',
    [t],
  );
  const dayReal = await k.raw(
    'select type, status, issue_date::text, count(*)::int from invoices where tenant_id = ? and deleted_at is null group by 1, 2, 3',
    [t],
  );
  expect(norm(day.rows)).toEqual(norm(dayReal.rows));
  const partyCounts = await k.raw(
    `select party, party_id, type, status, issue_date::text, sum(n)::int from invoice_party_counts where tenant_id = ?
      group by 1, 2, 3, 4, 5 having sum(n) <> 0`,
    [t],
  );
  const partyReal = await k.raw(
    `select 'c' as party, customer_id, type, status, issue_date::text, count(*)::int from invoices
      where tenant_id = ? and deleted_at is null and customer_id is not null group by 2, 3, 4, 5
     union all
     select 's', supplier_id, type, status, issue_date::text, count(*)::int from invoices
      where tenant_id = ? and deleted_at is null and supplier_id is not null group by 2, 3, 4, 5`,
    [t, t],
  );
  expect(norm(partyCounts.rows)).toEqual(norm(partyReal.rows));
  for (const table of ['customers', 'suppliers']) {
    const [{ n }] = (await k.raw('select coalesce(sum(n), 0)::int as n from list_counts where tenant_id = ? and list = ?', [t, table])).rows;
    const [{ c }] = (await k.raw(`select count(*)::int as c from ${table} where tenant_id = ? and deleted_at is null`, [t])).rows;
    expect(n).toBe(c);
  }
}

const filters = fc.record(
  {
    type: fc.constantFrom(...TYPES),
    status: fc.constantFrom(...STATUSES),
    customer: fc.nat(2),
    supplier: fc.nat(2),
    from: fc.nat(DAYS.length - 1),
    to: fc.nat(DAYS.length - 1),
  },
  { requiredKeys: [] },
);

describe('list counters equal count(*)', () => {
  it('after random concurrent transactions (some rolled back), for every write kind', async () => {
    const w = await world();
    const other = await world();
    let committed = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ ops: fc.array(op, { minLength: 1, maxLength: 5 }), rollback: fc.boolean(), tenant: fc.nat(4) }), { minLength: 2, maxLength: 6 }),
        async (txs) => {
          await Promise.all(
            txs.map(({ ops, rollback, tenant }) =>
              db()
                .transaction(async (trx) => {
                  for (const o of ops) await run(trx, tenant === 0 ? other : w, o);
                  if (rollback) throw new Error('rollback');
                })
                .then(
                  () => committed++,
                  (e: { message?: string; code?: string }) => {
                    // Rolled back on purpose, or one of two transactions that locked rows in opposite order.
                    if (e.message !== 'rollback' && e.code !== '40P01') throw e;
                  },
                ),
            ),
          );
          await compare(w);
          await compare(other);
        },
      ),
      { numRuns: 40 },
    );
    expect(committed).toBeGreaterThan(20);
  }, 120_000);

  it('the lists answer total = count(*) for random filters', async () => {
    const w = await world();
    await db().transaction(async (trx) => {
      for (let i = 0; i < 60; i++) {
        await run(trx, w, {
          k: 'insert',
          rows: [
            {
              type: TYPES[i % 4],
              status: STATUSES[(i * 7) % 5],
              day: i % DAYS.length,
              customer: i % 4 === 3 ? null : i % 3,
              supplier: i % 5 === 0 ? i % 3 : null,
              deleted: i % 9 === 0,
            },
          ],
        });
      }
    });
    await fc.assert(
      fc.asyncProperty(filters, async (f) => {
        const query = {
          type: f.type,
          status: f.status,
          customerId: f.customer === undefined ? undefined : w.customers[f.customer],
          supplierId: f.supplier === undefined ? undefined : w.suppliers[f.supplier],
          from: f.from === undefined ? undefined : DAYS[f.from],
          to: f.to === undefined ? undefined : DAYS[f.to],
        };
        const q = db()('invoices').where({ tenantId: w.tenantId }).whereNull('deletedAt');
        if (query.type) q.where('type', query.type);
        if (query.status) q.where('status', query.status);
        if (query.customerId) q.where('customerId', query.customerId);
        if (query.supplierId) q.where('supplierId', query.supplierId);
        if (query.from) q.where('issueDate', '>=', query.from);
        if (query.to) q.where('issueDate', '<=', query.to);
        const [{ count }] = await q.count<{ count: string }[]>({ count: '*' });
        const list = await listInvoices(db(), w.tenantId, { ...query, page: 1, limit: 5 });
        expect(list.pagination.total).toBe(Number(count));
      }),
      { numRuns: 60 },
    );
    const suppliers = await listSuppliers(db(), w.tenantId, { page: 1, limit: 2 });
    expect(suppliers.pagination.total).toBe(3);
    expect((await listCustomers(db(), w.tenantId, { limit: 2 })).total).toBe(3);
  }, 120_000);
});
