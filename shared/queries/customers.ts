import type { Db } from '../db';
import { invalidInput, notFound } from '../errors';
import { applySyncCursor, assertCursor, isSync, SYNC_DEFAULT_LIMIT, syncOrder, type SyncCursor } from './sync';
import { Customer, type EInvoiceFormat } from '../models/Customer';
import type { PeppolId } from '../domain/peppolId';

import type { CustomerType } from '../domain/dunning/interest';
/** A customer as the API returns it (spec fields + id, timestamps). */
export interface CustomerView {
  id: string;
  name: string;
  company: string | null;
  email: string | null;
  phone: string | null;
  address: string | null;
  vatId: string | null;
  country: string | null;
  currency: string | null;
  paymentTermDays: number | null;
  color: string | null;
  buyerReference: string | null;
  peppolId: PeppolId | null;
  einvoiceFormat: EInvoiceFormat | null;
  createdAt: string;
  customerType: CustomerType | null;
  updatedAt: string;
  deletedAt: string | null;
}

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : v == null ? null : String(v));

export function toCustomerView(r: Customer): CustomerView {
  return {
    id: r.id,
    name: r.name,
    company: r.company ?? null,
    email: r.email ?? null,
    phone: r.phone ?? null,
    address: r.address ?? null,
    vatId: r.vatId ?? null,
    country: r.country ?? null,
    currency: r.currency ?? null,
    paymentTermDays: r.paymentTermDays ?? null,
    color: r.color ?? null,
    buyerReference: r.buyerReference ?? null,
    peppolId: r.peppolId ?? null,
    einvoiceFormat: r.einvoiceFormat ?? null,
    createdAt: iso(r.createdAt)!,
    customerType: r.customerType ?? null,
    updatedAt: iso(r.updatedAt)!,
    deletedAt: iso(r.deletedAt),
  };
}

/**
 * Live (not soft-deleted) customers of a tenant, by name. With updatedSince: the incremental sync
 * (shared/queries/sync.ts), at most `limit` customers changed since, deleted ones included, oldest
 * change first; still a bare array (the spec's shape), paged by the cursor alone.
 */
export async function listCustomers(db: Db, tenantId: string, f: SyncCursor & { limit?: number } = {}): Promise<CustomerView[]> {
  assertCursor(f);
  if (isSync(f)) {
    const q = Customer.query(db).where({ tenantId });
    applySyncCursor(q, 'customers', f);
    return (await q.orderBy(syncOrder).limit(f.limit ?? SYNC_DEFAULT_LIMIT)).map(toCustomerView);
  }
  if (f.limit !== undefined) throw invalidInput('Query failed validation', [{ field: 'limit', message: 'needs updatedSince' }]);
  const rows = await Customer.query(db)
    .where({ tenantId })
    .whereNull('deletedAt')
    .orderBy([{ column: 'name' }, { column: 'createdAt' }]);
  return rows.map(toCustomerView);
}

export async function getCustomer(db: Db, tenantId: string, id: string): Promise<CustomerView> {
  const row = await Customer.query(db).where({ tenantId, id }).whereNull('deletedAt').first();
  if (!row) throw notFound('Customer');
  return toCustomerView(row);
}
