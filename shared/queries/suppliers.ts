import type { Db } from '../db';
import { invalidInput, notFound } from '../errors';
import { applySyncCursor, assertCursor, isSync, syncKeyset, type SyncCursor } from './sync';
import { applyKeyset, decodeCursor, keyColumns, keysetOrder, nextCursorOf, type Keyset } from './cursor';
import type { ModelObject } from 'objection';
import { Supplier } from '../models/Supplier';
import { pageEnvelope } from './paging';

export interface SupplierView {
  id: string;
  name: string;
  email: string | null;
  vatId: string | null;
  address: string | null;
  iban: string | null;
  country: string | null;
  merchantIds: Record<string, string>;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : String(v));

export function toSupplierView(r: ModelObject<Supplier>): SupplierView {
  return {
    id: r.id,
    name: r.name,
    email: r.email ?? null,
    vatId: r.vatId ?? null,
    address: r.address ?? null,
    iban: r.iban ?? null,
    country: r.country ?? null,
    merchantIds: r.merchantIds ?? {},
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
    deletedAt: r.deletedAt ? iso(r.deletedAt) : null,
  };
}

/** The supplier list's order: by name, then id (unique). */
export const SUPPLIER_KEYSET: Keyset = {
  tag: 'suppliers',
  columns: [
    { column: 'name', type: 'text' },
    { column: 'id', type: 'uuid' },
  ],
  desc: false,
};

/**
 * Live suppliers by name, by page or cursor (docs/lists.md; total from list_counts); with
 * updatedSince the incremental sync (shared/queries/sync.ts), deleted ones included.
 */
export async function listSuppliers(db: Db, tenantId: string, page: SyncCursor & { page: number; limit: number }) {
  assertCursor(page);
  if (page.cursor !== undefined && page.page !== 1)
    throw invalidInput('Query failed validation', [{ field: 'page', message: 'cursor replaces page: pass one of them' }]);
  const sync = isSync(page);
  const keyset = sync ? syncKeyset('suppliers') : SUPPLIER_KEYSET;
  // A list stays hand-written knex (plain rows, no model instances), as the other lists.
  const base = db('suppliers').where({ tenantId });
  if (sync) applySyncCursor(base, 'suppliers', page);
  else base.whereNull('deletedAt');
  const rowsQ = base
    .clone()
    .select('*', db.raw(keyColumns(keyset)))
    .orderBy(keysetOrder(keyset))
    .limit(page.limit + 1)
    .offset(page.cursor !== undefined ? 0 : (page.page - 1) * page.limit);
  if (!sync && page.cursor !== undefined) applyKeyset(rowsQ, keyset, decodeCursor(keyset, page.cursor));
  // A sync page counts the changes still ahead of its cursor (docs/sync.md); the list reads the counter.
  const count = async () =>
    Number(
      sync
        ? (await base.clone().count<{ count: number }[]>({ count: '*' }))[0].count
        : (await db('listCounts').where({ tenantId, list: 'suppliers' }).first(db.raw('coalesce(sum(n), 0)::bigint as total'))).total,
    );
  const [rows, total]: [Array<ModelObject<Supplier> & Record<string, unknown>>, number] = await Promise.all([rowsQ, count()]);
  return {
    data: rows.slice(0, page.limit).map(toSupplierView),
    pagination: { ...pageEnvelope(page, total), nextCursor: nextCursorOf(keyset, rows, page.limit) },
  };
}

export async function getSupplier(db: Db, tenantId: string, id: string): Promise<SupplierView> {
  const row = await Supplier.query(db).where({ tenantId, id }).whereNull('deletedAt').first();
  if (!row) throw notFound('Supplier');
  return toSupplierView(row);
}
