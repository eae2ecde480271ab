import type { Db } from '../db';
import { notFound } from '../errors';
import { applySyncCursor, assertCursor, isSync, syncOrder, type SyncCursor } from './sync';
import type { ModelObject } from 'objection';
import { Supplier } from '../models/Supplier';

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

/** Live suppliers by name; with updatedSince the incremental sync (shared/queries/sync.ts), deleted ones included. */
export async function listSuppliers(db: Db, tenantId: string, page: SyncCursor & { page: number; limit: number }) {
  assertCursor(page);
  // A list stays hand-written knex (plain rows, no model instances), as the other lists.
  const base = db('suppliers').where({ tenantId });
  if (isSync(page)) applySyncCursor(base, 'suppliers', page);
  else base.whereNull('deletedAt');
  const [{ count }] = await base.clone().count<{ count: number }[]>({ count: '*' });
  const rows: ModelObject<Supplier>[] = await base
    .clone()
    .orderBy(isSync(page) ? syncOrder : [{ column: 'name' }, { column: 'id' }])
    .limit(page.limit)
    .offset((page.page - 1) * page.limit);
  const total = Number(count);
  return {
    data: rows.map(toSupplierView),
    pagination: { page: page.page, limit: page.limit, total, totalPages: Math.ceil(total / page.limit) },
  };
}

export async function getSupplier(db: Db, tenantId: string, id: string): Promise<SupplierView> {
  const row = await Supplier.query(db).where({ tenantId, id }).whereNull('deletedAt').first();
  if (!row) throw notFound('Supplier');
  return toSupplierView(row);
}
