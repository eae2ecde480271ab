import type { Db } from '../db';
import { notFound } from '../errors';
import { Customer, type EInvoiceFormat } from '../models/Customer';
import type { PeppolId } from '../domain/peppolId';

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
    updatedAt: iso(r.updatedAt)!,
    deletedAt: iso(r.deletedAt),
  };
}

/** Live (not soft-deleted) customers of a tenant, by name. */
export async function listCustomers(db: Db, tenantId: string): Promise<CustomerView[]> {
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
