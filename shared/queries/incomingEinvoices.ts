import type { Knex } from 'knex';
import type { Db } from '../db';
import { notFound } from '../errors';
import { IncomingEinvoice, type IncomingEinvoiceStatus, type IncomingProblem } from '../models/IncomingEinvoice';
import { Supplier } from '../models/Supplier';
import { normalizeVatId } from '../domain/vatId';
import { normalizeIban } from '../domain/iban';
import { pageEnvelope } from './paging';

/** What GET /api/incoming-einvoices(/:id) answers: the row without its bytes. */
export interface IncomingEinvoiceView {
  id: string;
  status: IncomingEinvoiceStatus;
  format: string | null;
  syntax: string | null;
  profile: string | null;
  mediaType: string;
  size: number;
  invoiceId: string | null;
  duplicateOf: string | null;
  valid: boolean | null;
  errors: IncomingProblem[];
  warnings: string[];
  receivedAt: string;
  processedAt: string | null;
}

const iso = (v: Date | string | null) => (v == null ? null : v instanceof Date ? v.toISOString() : String(v));

/** Every column but the bytes: a list must not load every stored file. */
const VIEW_COLUMNS = [
  'id',
  'status',
  'format',
  'syntax',
  'profile',
  'mediaType',
  'size',
  'invoiceId',
  'duplicateOf',
  'valid',
  'errors',
  'warnings',
  'receivedAt',
  'processedAt',
] as const;

type ViewRow = Pick<IncomingEinvoice, (typeof VIEW_COLUMNS)[number]>;

export function toIncomingEinvoiceView(r: ViewRow): IncomingEinvoiceView {
  return {
    id: r.id,
    status: r.status,
    format: r.format ?? null,
    syntax: r.syntax ?? null,
    profile: r.profile ?? null,
    mediaType: r.mediaType,
    size: Number(r.size),
    invoiceId: r.invoiceId ?? null,
    duplicateOf: r.duplicateOf ?? null,
    valid: r.valid ?? null,
    errors: r.errors ?? [],
    warnings: r.warnings ?? [],
    receivedAt: iso(r.receivedAt)!,
    processedAt: iso(r.processedAt),
  };
}

export async function getIncomingEinvoice(db: Db, tenantId: string, id: string): Promise<IncomingEinvoiceView> {
  const row = await IncomingEinvoice.query(db)
    .select(...VIEW_COLUMNS)
    .where({ tenantId, id })
    .first();
  if (!row) throw notFound('Incoming e-invoice');
  return toIncomingEinvoiceView(row);
}

export async function listIncomingEinvoices(db: Db, tenantId: string, q: { status?: IncomingEinvoiceStatus; page: number; limit: number }) {
  // A list stays hand-written knex (plain rows, no model instances), as the other lists.
  const base = db('incomingEinvoices').where({ tenantId });
  if (q.status) base.where({ status: q.status });
  const [{ count }] = await base.clone().count<{ count: number }[]>({ count: '*' });
  const rows: ViewRow[] = await base
    .clone()
    .select(...VIEW_COLUMNS)
    .orderBy([
      { column: 'receivedAt', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(q.limit)
    .offset((q.page - 1) * q.limit);
  const total = Number(count);
  return {
    data: rows.map(toIncomingEinvoiceView),
    pagination: pageEnvelope(q, total),
  };
}

/** The stored file of an imported invoice, byte for byte (null: none, or not imported from a file). */
export async function originalOfInvoice(db: Db, tenantId: string, invoiceId: string): Promise<{ bytes: Buffer; mediaType: string; sha256: string } | null> {
  const row = await IncomingEinvoice.query(db)
    .select('original', 'mediaType', 'sha256')
    .where({ tenantId, invoiceId, status: 'imported' })
    .orderBy('receivedAt')
    .first();
  return row ? { bytes: row.original, mediaType: row.mediaType, sha256: row.sha256 } : null;
}

/** An earlier upload of the same file that was not rejected (a rejected one may be sent again). */
export async function earlierUploadOfSameFile(db: Db, tenantId: string, sha256: string): Promise<Pick<IncomingEinvoice, 'id' | 'invoiceId'> | undefined> {
  return IncomingEinvoice.query(db)
    .select('id', 'invoiceId')
    .where({ tenantId, sha256 })
    .whereIn('status', ['queued', 'processing', 'imported'])
    .orderBy('receivedAt')
    .first();
}

/**
 * The supplier a seller party is: the hinted one, else by VAT ID, else by IBAN, else by exact
 * name (the first such supplier, oldest first). Null: a new supplier.
 */
export async function matchSupplier(
  db: Knex,
  tenantId: string,
  seller: { vatId: string | null; iban: string | null; name: string | null },
  hint: string | null,
): Promise<string | null> {
  const active = () =>
    Supplier.query(db)
      .select('id')
      .where({ tenantId })
      .whereNull('deletedAt')
      .orderBy([{ column: 'createdAt' }, { column: 'id' }]);
  if (hint) {
    const hinted = await active().where({ id: hint }).first();
    if (hinted) return hinted.id;
  }
  if (seller.vatId) {
    // Stored VAT IDs are normalised (no spaces, upper case); the document's may not be.
    const byVat = await active()
      .where({ vatId: normalizeVatId(seller.vatId) })
      .first();
    if (byVat) return byVat.id;
  }
  if (seller.iban) {
    const byIban = await active()
      .where({ iban: normalizeIban(seller.iban) })
      .first();
    if (byIban) return byIban.id;
  }
  if (seller.name) {
    const byName = await active().where({ name: seller.name.trim() }).first();
    if (byName) return byName.id;
  }
  return null;
}

/** The incoming invoice already booked from this supplier under this number, if any. */
export async function existingIncomingInvoice(db: Knex, tenantId: string, supplierId: string, invoiceNumber: string): Promise<string | null> {
  // A plain lookup on invoices; the Invoice model's hot paths are hand-written too.
  const row = await db('invoices').select('id').where({ tenantId, supplierId, type: 'eingangsrechnung', invoiceNumber }).whereNull('deletedAt').first();
  return row?.id ?? null;
}

/** The row's bytes and state for the import job (undefined: not this tenant's, or gone). */
export async function incomingForImport(db: Db, tenantId: string, id: string) {
  return IncomingEinvoice.query(db).select('id', 'status', 'original', 'mediaType').where({ tenantId, id }).first();
}
