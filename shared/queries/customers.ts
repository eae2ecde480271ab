import type { Db } from '../db';
import { notFound } from '../errors';
import { applySyncCursor, assertCursor, isSync, SYNC_DEFAULT_LIMIT, syncKeyset, type SyncCursor } from './sync';
import { applyKeyset, decodeCursor, keyColumns, keysetOrder, nextCursorOf, type Keyset } from './cursor';
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
  customerType: CustomerType | null;
  createdAt: string;
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
    customerType: r.customerType ?? null,
    createdAt: iso(r.createdAt)!,
    updatedAt: iso(r.updatedAt)!,
    deletedAt: iso(r.deletedAt),
  };
}

/** The customer list's order: by name, then creation, then id (unique). */
export const CUSTOMER_KEYSET: Keyset = {
  tag: 'customers',
  columns: [
    { column: 'name', type: 'text' },
    { column: 'created_at', type: 'timestamp' },
    { column: 'id', type: 'uuid' },
  ],
  desc: false,
};

export interface CustomerPage {
  data: CustomerView[];
  /** The position after the last entry when more follow (the X-Next-Cursor header), else null. */
  nextCursor: string | null;
  /** Live customers of the tenant (the X-Total-Count header): a counter, not a count (docs/lists.md). */
  total: number | null;
}

/**
 * Live (not soft-deleted) customers of a tenant, by name: all of them (the spec's bare array), or
 * with `limit` and/or `cursor` a page of them (docs/lists.md). With updatedSince: the incremental
 * sync (shared/queries/sync.ts), at most `limit` customers changed since, deleted ones included,
 * oldest change first. The route answers `data` as a bare array either way.
 */
export async function listCustomers(db: Db, tenantId: string, f: SyncCursor & { limit?: number } = {}): Promise<CustomerPage> {
  assertCursor(f);
  const sync = isSync(f);
  const paged = sync || f.limit !== undefined || f.cursor !== undefined;
  const keyset = sync ? syncKeyset('customers') : CUSTOMER_KEYSET;
  const limit = f.limit ?? SYNC_DEFAULT_LIMIT;
  const q = Customer.query(db).where({ tenantId });
  if (sync) applySyncCursor(q, 'customers', f);
  else q.whereNull('deletedAt');
  if (!sync && f.cursor !== undefined) applyKeyset(q, keyset, decodeCursor(keyset, f.cursor));
  q.select('*', db.raw(keyColumns(keyset))).orderBy(keysetOrder(keyset));
  if (paged) q.limit(limit + 1);
  const total = async () =>
    sync ? null : Number((await db('listCounts').where({ tenantId, list: 'customers' }).first(db.raw('coalesce(sum(n), 0)::bigint as total'))).total);
  const [rows, count] = await Promise.all([q, paged ? total() : null]);
  const data = (paged ? rows.slice(0, limit) : rows).map(toCustomerView);
  return {
    data,
    nextCursor: paged ? nextCursorOf(keyset, rows as unknown as Array<Record<string, unknown>>, limit) : null,
    total: paged ? count : data.length,
  };
}

export async function getCustomer(db: Db, tenantId: string, id: string): Promise<CustomerView> {
  const row = await Customer.query(db).where({ tenantId, id }).whereNull('deletedAt').first();
  if (!row) throw notFound('Customer');
  return toCustomerView(row);
}
