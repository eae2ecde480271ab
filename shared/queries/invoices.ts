import Decimal from 'decimal.js';
import { columnName, queryPrepared, runCompiledSql, type Db } from '../db';
import { applySyncCursor, assertCursor, isSync, syncKeyset, type SyncCursor } from './sync';
import { applyKeyset, decodeCursor, keyColumns, keysetOrder, nextCursorOf, type Keyset } from './cursor';
import type { Knex } from 'knex';
import type { ModelObject } from 'objection';
import { invalidInput, notFound } from '../errors';
import { vatIdCountry } from '../domain/vatId';
import { amountDue } from '../domain/invoiceTotals';
import { fmtMoney, fmtRate, quantityNumber } from '../domain/money';
import type {
  DeliveryView,
  DocumentInput,
  InvoiceItemView,
  InvoiceStatus,
  InvoiceType,
  InvoiceView,
  InvoiceWarning,
  PartyView,
  PaymentView,
  SellerView,
  TaxBreakdownView,
} from '../domain/invoiceView';
import type { CustomerSnapshot, Invoice } from '../models/Invoice';
import type { TenantSettingsJson } from '../models/Tenant';
import type { InvoiceItem } from '../models/InvoiceItem';
import type { Payment } from '../models/Payment';
import { pageEnvelope } from './paging';

/**
 * Read side of invoices. loadInvoiceView() is THE way to get an invoice as the API returns it and
 * the document renderers consume it (workers pass their own knex). Scoped by tenantId; deleted
 * invoices are not found. A finalized invoice shows its customer and seller snapshots, a draft
 * live data: a document must not change when the customer's or tenant's data does.
 */
const iso = (v: unknown): string | null => (v == null ? null : v instanceof Date ? v.toISOString() : String(v));

/** A timestamp as a row gives it (Date) or as the single read's JSON does (ISO text). */
type Timestamp = Date | string;

/** The invoice columns a view is built from (VIEW_COLUMNS); the single read gives timestamps as ISO text. */
export type InvoiceViewRow = Omit<Pick<ModelObject<Invoice>, ViewColumn>, 'sentAt' | 'createdAt' | 'updatedAt'> & {
  sentAt: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
};

/** An item as the view needs it (the single read leaves out id and tenant). */
export type ItemViewRow = Pick<
  ModelObject<InvoiceItem>,
  | 'invoiceId'
  | 'position'
  | 'description'
  | 'unit'
  | 'quantity'
  | 'unitPrice'
  | 'taxRate'
  | 'netAmount'
  | 'taxAmount'
  | 'grossAmount'
  | 'taxCategory'
  | 'exemptionReason'
  | 'exemptionNote'
>;

export type PaymentViewRow = Pick<ModelObject<Payment>, 'id' | 'invoiceId' | 'amount' | 'date' | 'method'> & { createdAt: Timestamp };

/** A customer row, a customer snapshot or a party the documents show: what partyFrom() reads. */
export interface PartySource {
  name: string;
  company?: string | null;
  email?: string | null;
  phone?: string | null;
  address?: string | null;
  vatId?: string | null;
  country?: string | null;
  buyerReference?: string | null;
  peppolId?: { scheme: string; id: string } | null;
}

/** The tenant columns its seller view shows (a Tenant model or a row of those columns). */
export interface SellerSource {
  name: string;
  email: string | null;
  phone?: string | null;
  address: string | null;
  vatId: string | null;
  taxNumber: string | null;
  iban: string | null;
  bic: string | null;
  country: string;
  /** tenants.settings: the seller contact and electronic address of e-invoices. */
  settings?: Pick<TenantSettingsJson, 'contactName' | 'contactPhone' | 'contactEmail' | 'peppolId'> | null;
}

export interface DeliveryViewRow {
  id: string;
  invoiceId: string;
  to: string;
  status: DeliveryView['status'];
  attempts: number;
  smtpResponse: string | null;
  error: string | null;
  sentAt: Timestamp | null;
  createdAt: Timestamp;
}

/** A party as the invoice view and the documents show it: the country falls back to the VAT id's, then the tenant's. */
export function partyFrom(src: PartySource, fallbackCountry: string | null): PartyView {
  return {
    name: src.name,
    company: src.company ?? null,
    email: src.email ?? null,
    phone: src.phone ?? null,
    address: src.address ?? null,
    vatId: src.vatId ?? null,
    country: src.country ?? (src.vatId ? vatIdCountry(src.vatId) : null) ?? fallbackCountry,
    peppolId: src.peppolId ?? null,
    buyerReference: src.buyerReference ?? null,
  };
}

export function sellerFromTenant(t: SellerSource): SellerView {
  return {
    name: t.name,
    company: t.name,
    email: t.email ?? null,
    phone: t.phone ?? null,
    address: t.address ?? null,
    vatId: t.vatId ?? null,
    taxNumber: t.taxNumber ?? null,
    iban: t.iban ?? null,
    bic: t.bic ?? null,
    country: t.country,
    contactName: t.settings?.contactName ?? null,
    contactPhone: t.settings?.contactPhone ?? null,
    contactEmail: t.settings?.contactEmail ?? null,
    peppolId: t.settings?.peppolId ?? null,
  };
}

/** What a finalized invoice freezes about its customer. */
export function customerSnapshot(c: PartySource & { id: string }): CustomerSnapshot {
  return {
    id: c.id,
    name: c.name,
    company: c.company ?? null,
    email: c.email ?? null,
    phone: c.phone ?? null,
    address: c.address ?? null,
    vatId: c.vatId ?? null,
    country: c.country ?? null,
    // The e-invoice data only when the customer has it: a snapshot without them reads as none.
    ...(c.buyerReference ? { buyerReference: c.buyerReference } : {}),
    ...(c.peppolId ? { peppolId: c.peppolId } : {}),
  };
}

function itemView(r: ItemViewRow): InvoiceItemView {
  return {
    position: r.position,
    description: r.description,
    unit: r.unit ?? null,
    quantity: quantityNumber(r.quantity),
    unitPrice: fmtMoney(r.unitPrice),
    taxRate: fmtRate(r.taxRate),
    netAmount: fmtMoney(r.netAmount),
    taxAmount: fmtMoney(r.taxAmount),
    grossAmount: fmtMoney(r.grossAmount),
    taxCategory: r.taxCategory ?? null,
    exemptionReason: r.exemptionReason ?? null,
    exemptionNote: r.exemptionNote ?? null,
  };
}

/** A draft's 0 % lines without a category: sending refuses them (docs/vat-categories.md). */
function draftWarnings(status: string, items: InvoiceItemView[]): InvoiceWarning[] {
  if (status !== 'entwurf') return [];
  return items
    .map((it, i) => ({ it, i }))
    .filter(({ it }) => it.taxCategory === null)
    .map(({ i }) => ({
      field: `items.${i}.taxCategory`,
      message:
        'a 0 % line needs its VAT situation (zeroRated, exempt with exemptionReason, reverseCharge, intraCommunitySupply, export or notSubject) before the invoice can be sent',
    }));
}

export function paymentView(r: PaymentViewRow): PaymentView {
  return { id: r.id, amount: fmtMoney(r.amount), date: r.date, method: r.method, createdAt: iso(r.createdAt)! };
}

/** Rows related to a set of invoices, as both read paths (list and single) gather them. */
export interface Related {
  tenantCountry: string | null;
  items: ItemViewRow[];
  customers: Array<PartySource & { id: string }>;
  payments: PaymentViewRow[];
  related: Array<{ id: string; number: string | null }>;
  deliveries: DeliveryViewRow[];
}

/**
 * The view of a freshly created invoice from the rows its command just wrote, so answering a
 * create costs no read-back statement.
 */
export const viewOfCreated = (row: InvoiceViewRow, rel: Related): InvoiceView => assembleViews([row], rel, { deliveries: true })[0];

function assembleViews(rows: InvoiceViewRow[], rel: Related, opts: { deliveries?: boolean }): InvoiceView[] {
  const { tenantCountry, items, customers, payments, related, deliveries } = rel;
  const group = <T extends { invoiceId: string }>(list: T[]) => {
    const m = new Map<string, T[]>();
    for (const x of list) m.set(x.invoiceId, [...(m.get(x.invoiceId) ?? []), x]);
    return m;
  };
  const itemsBy = group(items);
  const paymentsBy = group(payments);
  const customerBy = new Map(customers.map((c) => [c.id, c]));
  const numberBy = new Map(related.map((r) => [r.id, r.number]));
  const deliveriesBy = group(deliveries);

  return rows.map((r) => {
    const type = r.type as InvoiceType;
    let customer: InvoiceView['customer'] = null;
    if (r.customerSnapshot) customer = { id: r.customerId ?? r.customerSnapshot.id, ...partyFrom(r.customerSnapshot, tenantCountry) };
    else if (r.customerId && customerBy.has(r.customerId)) customer = { id: r.customerId, ...partyFrom(customerBy.get(r.customerId)!, tenantCountry) };
    const totalGross = fmtMoney(r.totalGross);
    const amountPaid = fmtMoney(r.amountPaid);
    const items = (itemsBy.get(r.id) ?? []).map(itemView);
    const view: InvoiceView = {
      id: r.id,
      type,
      number: r.number ?? (type === 'eingangsrechnung' ? (r.invoiceNumber ?? null) : null),
      status: r.status as InvoiceStatus,
      customerId: r.customerId ?? null,
      customer,
      items,
      notes: r.notes ?? null,
      footerText: r.footerText ?? null,
      customFields: r.customFields ?? {},
      paymentTermDays: r.paymentTermDays ?? null,
      detailsMarkdown: r.detailsMarkdown ?? null,
      currency: r.currency,
      issueDate: r.issueDate,
      dueDate: r.dueDate ?? null,
      serviceDate: r.serviceDate ?? null,
      serviceEndDate: r.serviceEndDate ?? null,
      buyerReference: r.buyerReference ?? null,
      orderReference: r.orderReference ?? null,
      totalNet: fmtMoney(r.totalNet),
      totalTax: fmtMoney(r.totalTax),
      totalGross,
      taxBreakdown: ((r.taxBreakdown ?? []) as TaxBreakdownView[]).map((g) => ({ taxRate: g.taxRate, net: g.net, tax: g.tax })),
      amountPaid,
      amountDue: r.status === 'storniert' || type === 'angebot' ? '0.00' : amountDue(totalGross, amountPaid),
      payments: (paymentsBy.get(r.id) ?? []).map(paymentView),
      relatedInvoiceId: r.relatedInvoiceId ?? null,
      relatedInvoiceNumber: r.relatedInvoiceId ? (numberBy.get(r.relatedInvoiceId) ?? null) : null,
      // The credit note its cancellation created (cancelInvoice sets the column; a check keeps it
      // on storniert invoices only). Manual credit notes pointing at an invoice are not its Storno.
      creditNoteId: r.creditNoteId ?? null,
      sentAt: iso(r.sentAt),
      ...(opts.deliveries
        ? {
            deliveries: (deliveriesBy.get(r.id) ?? []).map((d) => ({
              id: d.id,
              to: d.to,
              status: d.status,
              attempts: d.attempts,
              smtpResponse: d.smtpResponse ?? null,
              error: d.error ?? null,
              sentAt: iso(d.sentAt),
              createdAt: iso(d.createdAt)!,
            })),
          }
        : {}),
      exchangeRate:
        r.exchangeRate && r.exchangeRateDate && r.exchangeRateSource
          ? { rate: new Decimal(r.exchangeRate).toString(), date: r.exchangeRateDate, source: r.exchangeRateSource }
          : null,
      warnings: draftWarnings(r.status, items),
      createdAt: iso(r.createdAt)!,
      updatedAt: iso(r.updatedAt)!,
    };
    if (type === 'eingangsrechnung') {
      Object.assign(view, {
        supplierId: r.supplierId ?? null,
        invoiceNumber: r.invoiceNumber ?? null,
        invoiceDate: r.invoiceDate ?? null,
        source: r.source ?? null,
        externalId: r.externalId ?? null,
      });
    }
    return view;
  });
}

/** An invoice and its related rows as JSON (SINGLE_READ_INVOICE, RELATED_JSON): a list page's row. */
interface ViewJsonRow {
  tenantCountry: string;
  invoiceJson: InvoiceViewRow;
  itemsJson: ItemViewRow[];
  customerJson: (PartySource & { id: string }) | null;
  paymentsJson: PaymentViewRow[];
  relatedJson: { id: string; number: string | null } | null;
}

type ListPageRow = ViewJsonRow & { deletedAt: string | null; listTotal: number | string } & Record<string, unknown>;

/** The single read's one row: the list's columns plus deliveries and the view's version (SINGLE_READ_RELATED). */
interface SingleReadRow extends ViewJsonRow {
  deliveriesJson: DeliveryViewRow[];
  viewVersion: string;
}

/** One invoice with items, customer and payments; 404 when missing, deleted or another tenant's. */
export async function loadInvoiceView(db: Db, tenantId: string, id: string): Promise<InvoiceView> {
  return (await loadVersionedInvoiceView(db, tenantId, id)).view;
}

/**
 * loadInvoiceView() plus the version of the rows the view was built from, read by the same
 * statement (one snapshot): invoiceViewVersion() answers the same string for as long as nothing
 * the view shows has changed. The version is only meaningful outside a transaction: inside one,
 * it may name rows that are not committed.
 */
export async function loadVersionedInvoiceView(db: Db, tenantId: string, id: string): Promise<{ view: InvoiceView; version: string }> {
  // One statement instead of seven: on a busy database host every round trip costs more than
  // the query itself (docs/benchmarks.md). Related rows come back as JSON (RELATED_JSON), as in
  // the list's and the documents' statements, and all three share assembleViews().
  const query = () =>
    db('invoices as i')
      .join('tenants as t', 't.id', 'i.tenantId')
      .where({ 'i.tenantId': tenantId, 'i.id': id })
      .whereNull('i.deletedAt')
      .first('t.country as tenantCountry', db.raw(`${SINGLE_READ_INVOICE}, ${SINGLE_READ_RELATED}, ${VIEW_VERSION}`));
  // Outside a transaction the statement is prepared (planned once per connection) and its text
  // built once per process: only the bindings change.
  let row: SingleReadRow | undefined;
  if ((db as { isTransaction?: boolean }).isTransaction) row = await query();
  else {
    singleReadSql ??= query().toSQL().toNative().sql;
    row = (await queryPrepared<SingleReadRow>(db as Knex, 'invoice-single-read', { sql: singleReadSql, bindings: [tenantId, id, 1] }))[0];
  }
  if (!row) throw notFound('Invoice');
  const { tenantCountry, invoiceJson: invoice, itemsJson, customerJson, paymentsJson, relatedJson, deliveriesJson, viewVersion } = row;
  const view = assembleViews(
    [invoice],
    {
      tenantCountry,
      items: itemsJson,
      customers: customerJson ? [customerJson] : [],
      payments: paymentsJson,
      related: relatedJson ? [relatedJson] : [],
      deliveries: deliveriesJson,
    },
    { deliveries: true },
  )[0];
  return { view, version: viewVersion };
}

/**
 * The version loadVersionedInvoiceView() would give the invoice now, or null when it is missing,
 * deleted or another tenant's: one indexed read of the invoice, its tenant and, where the view
 * shows them live, its customer and related invoice, without building any JSON.
 */
export async function invoiceViewVersion(db: Knex, tenantId: string, id: string): Promise<string | null> {
  const [row] = await queryPrepared<{ viewVersion: string }>(db, 'invoice-view-version', { sql: VERSION_SQL, bindings: [id, tenantId] });
  return row?.viewVersion ?? null;
}

/**
 * The version of invoice `i` (joined with tenant `t`) as its view sees it: the row versions (`xmin`)
 * of the invoice, its tenant, its customer while a draft shows it live, and the related invoice.
 * Items, payments and deliveries bump the invoice's own row by trigger. Customer and related invoice
 * are read by primary key, tenant compared after (fenced with `offset 0`), so no other tenant's row
 * enters (docs/invoice-read-cache.md, "How it stays right").
 */
const VIEW_VERSION = `i.xmin::text || '.' || t.xmin::text
  || '.' || coalesce((select c.xmin::text from (select xmin, tenant_id from customers where id = i.customer_id and i.customer_snapshot is null offset 0) c
                       where c.tenant_id = i.tenant_id), '-')
  || '.' || coalesce((select r.xmin::text from (select xmin, tenant_id from invoices where id = i.related_invoice_id offset 0) r
                       where r.tenant_id = i.tenant_id), '-') as "viewVersion"`;

/**
 * invoiceViewVersion()'s statement: the invoice by its primary key alone, fenced (`offset 0`) so
 * that no plan reaches it through a tenant index, and the tenant compared after (bindings: id,
 * tenant). `xmin` is carried out of the fence as a column of that name, which VIEW_VERSION reads.
 */
const VERSION_SQL = `select ${VIEW_VERSION}
  from (select xmin, tenant_id, customer_id, customer_snapshot, related_invoice_id, deleted_at from invoices where id = $1 offset 0) i
  join tenants t on t.id = i.tenant_id
 where i.tenant_id = $2 and i.deleted_at is null`;

/**
 * The invoice columns assembleViews() reads. Not `i.*`: the seller snapshot, version, creator and
 * lifecycle stamps are not part of the view, and every column costs parsing on each read.
 */
export type ViewColumn = (typeof VIEW_COLUMNS)[number];

export const VIEW_COLUMNS = [
  'id',
  'type',
  'status',
  'number',
  'customerId',
  'supplierId',
  'customerSnapshot',
  'currency',
  'issueDate',
  'serviceDate',
  'serviceEndDate',
  'buyerReference',
  'orderReference',
  'dueDate',
  'paymentTermDays',
  'notes',
  'footerText',
  'customFields',
  'detailsMarkdown',
  'totalNet',
  'totalTax',
  'totalGross',
  'amountPaid',
  'taxBreakdown',
  'relatedInvoiceId',
  'creditNoteId',
  'invoiceNumber',
  'invoiceDate',
  'source',
  'externalId',
  'exchangeRate',
  'exchangeRateDate',
  'exchangeRateSource',
  'sentAt',
  'createdAt',
  'updatedAt',
] as const;

/** The single-read statement's text; its bindings are (tenantId, id, limit 1). */
let singleReadSql: string | null = null;

const isoSql = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const MONEY_COLUMNS: ReadonlySet<string> = new Set(['totalNet', 'totalTax', 'totalGross', 'amountPaid', 'exchangeRate']);
const TIMESTAMP_COLUMNS: ReadonlySet<string> = new Set(['sentAt', 'createdAt', 'updatedAt']);

/**
 * The single read's invoice `i` as ONE JSON column with VIEW_COLUMNS' keys and the values the
 * row path gives assembleViews(): numerics as text (never JSON numbers: no floats), timestamps
 * as ISO text (iso() takes both), dates as YYYY-MM-DD. One column, not 31: the driver sets up
 * and parses every column of every result on its own (docs/benchmarks.md, "the read as one JSON
 * column").
 */
const SINGLE_READ_INVOICE = `json_build_object(${VIEW_COLUMNS.map((c) => {
  const col = `i.${columnName(c)}`;
  return `'${c}', ${MONEY_COLUMNS.has(c) ? `${col}::text` : TIMESTAMP_COLUMNS.has(c) ? isoSql(col) : col}`;
}).join(', ')}) as "invoiceJson"`;

/**
 * Related rows of one invoice `i` as JSON; numerics as text (never JSON numbers: no floats). The
 * related invoice is read by primary key, fenced (`offset 0`) so that no plan reaches it through
 * a tenant's list index, and its tenant compared after.
 */
const RELATED_JSON = `
  coalesce((select json_agg(json_build_object(
      'invoiceId', x.invoice_id, 'position', x.position, 'description', x.description, 'unit', x.unit,
      'quantity', x.quantity::text, 'unitPrice', x.unit_price::text, 'taxRate', x.tax_rate::text,
      'netAmount', x.net_amount::text, 'taxAmount', x.tax_amount::text, 'grossAmount', x.gross_amount::text,
      'taxCategory', x.tax_category, 'exemptionReason', x.exemption_reason, 'exemptionNote', x.exemption_note)
      order by x.position)
    from invoice_items x where x.tenant_id = i.tenant_id and x.invoice_id = i.id), '[]'::json) as "itemsJson",
  (select json_build_object('id', c.id, 'name', c.name, 'company', c.company, 'email', c.email, 'phone', c.phone,
      'address', c.address, 'vatId', c.vat_id, 'country', c.country,
      'buyerReference', c.buyer_reference, 'peppolId', c.peppol_id)
    from customers c where c.tenant_id = i.tenant_id and c.id = i.customer_id and i.customer_snapshot is null) as "customerJson",
  coalesce((select json_agg(json_build_object('id', p.id, 'invoiceId', p.invoice_id, 'amount', p.amount::text,
      'date', p.date::text, 'method', p.method, 'createdAt', ${isoSql('p.created_at')}) order by p.date, p.created_at)
    from payments p where p.tenant_id = i.tenant_id and p.invoice_id = i.id), '[]'::json) as "paymentsJson",
  (select json_build_object('id', r.id, 'number', coalesce(r.number, r.invoice_number))
    from (select id, number, invoice_number, tenant_id from invoices where id = i.related_invoice_id offset 0) r
   where r.tenant_id = i.tenant_id) as "relatedJson"`;

/** The single read's e-mail deliveries of invoice `i`, newest first. */
const SINGLE_READ_RELATED = `${RELATED_JSON},
  coalesce((select json_agg(json_build_object('id', d.id, 'invoiceId', d.invoice_id, 'to', d.to, 'status', d.status,
      'attempts', d.attempts, 'smtpResponse', d.smtp_response, 'error', d.error,
      'sentAt', ${isoSql('d.sent_at')}, 'createdAt', ${isoSql('d.created_at')}) order by d.created_at desc)
    from deliveries d where d.tenant_id = i.tenant_id and d.invoice_id = i.id), '[]'::json) as "deliveriesJson"`;

/** The invoice plus its seller, as document renderers need it (seller frozen at finalization). */
export async function loadDocumentInput(db: Db, tenantId: string, id: string): Promise<DocumentInput> {
  const found = await loadDocumentRow(db, tenantId, id);
  if (!found) throw notFound('Invoice');
  return found.input;
}

/**
 * The invoice's version and document content in one statement (the single read's JSON columns
 * without deliveries, which no document shows, plus the seller's snapshot and the tenant): a
 * render job's load was nine statements, about a third of a PDF job's CPU in the renderers
 * (docs/benchmarks.md, "Rendering"). Null when missing, deleted or another tenant's.
 */
export async function loadDocumentRow(db: Db, tenantId: string, id: string): Promise<{ version: number; input: DocumentInput } | null> {
  type DocumentRow = ViewJsonRow & { version: number; sellerSnapshot: Partial<SellerView> | null; tenantJson: SellerSource };
  // Hot (every render and e-mail job): prepared once per connection, its text converted once.
  const [row] = await runCompiledSql<DocumentRow>(db, DOCUMENT_SQL, [tenantId, id]);
  if (!row) return null;
  const [invoice] = assembleViews(
    [row.invoiceJson],
    {
      tenantCountry: row.tenantCountry,
      items: row.itemsJson,
      customers: row.customerJson ? [row.customerJson] : [],
      payments: row.paymentsJson,
      related: row.relatedJson ? [row.relatedJson] : [],
      deliveries: [],
    },
    {},
  );
  const seller = sellerFromTenant(row.tenantJson);
  return { version: row.version, input: { invoice, seller: row.sellerSnapshot ? { ...seller, ...row.sellerSnapshot } : seller } };
}

/** loadDocumentRow's statement; bindings (tenantId, id). The tenant as SellerSource's keys. */
const DOCUMENT_SQL = `select i.version, t.country as "tenantCountry", ${SINGLE_READ_INVOICE}, ${RELATED_JSON},
       i.seller_snapshot as "sellerSnapshot",
       json_build_object('name', t.name, 'email', t.email, 'address', t.address, 'vatId', t.vat_id, 'taxNumber', t.tax_number,
         'iban', t.iban, 'bic', t.bic, 'country', t.country,
         'settings', json_build_object('contactName', t.settings->'contactName', 'contactPhone', t.settings->'contactPhone',
           'contactEmail', t.settings->'contactEmail', 'peppolId', t.settings->'peppolId')) as "tenantJson"
  from invoices i join tenants t on t.id = i.tenant_id
 where i.tenant_id = ? and i.id = ? and i.deleted_at is null`;

export interface InvoiceListFilters extends SyncCursor {
  type?: InvoiceType;
  status?: InvoiceStatus;
  customerId?: string;
  supplierId?: string;
  from?: string;
  to?: string;
  page: number;
  limit: number;
}

/** The list's order: newest issue date first, then newest created, then id (unique). */
export const INVOICE_KEYSET: Keyset = {
  tag: 'invoices',
  columns: [
    { column: 'issue_date', type: 'date' },
    { column: 'created_at', type: 'timestamp' },
    { column: 'id', type: 'uuid' },
  ],
  desc: true,
};

/**
 * Paged list, newest issue date first. Entries are full invoice views (items, customer, totals,
 * payments) except the e-mail deliveries, plus deletedAt; the page's payments come from one
 * statement. With updatedSince: the incremental sync (shared/queries/sync.ts), deleted invoices
 * included, oldest change first. docs/lists.md: total from the counters, `cursor` (keyset) or
 * `page` (OFFSET over an index-only scan of the keys), nextCursor always.
 */
export async function listInvoices(db: Db, tenantId: string, f: InvoiceListFilters) {
  assertCursor(f);
  if (f.cursor !== undefined && f.page !== 1)
    throw invalidInput('Query failed validation', [{ field: 'page', message: 'cursor replaces page: pass one of them' }]);
  const sync = isSync(f);
  const keyset = sync ? syncKeyset('invoices') : INVOICE_KEYSET;
  // Hand-written knex, no models: a page is up to 100 rows and this is the hottest list.
  const q = db('invoices').where({ tenantId });
  if (sync) applySyncCursor(q, 'invoices', f);
  else q.whereNull('deletedAt');
  if (f.type) q.where('type', f.type);
  if (f.status) q.where('status', f.status);
  if (f.customerId) q.where('customerId', f.customerId);
  if (f.supplierId) q.where('supplierId', f.supplierId);
  if (f.from) q.where('issueDate', '>=', f.from);
  if (f.to) q.where('issueDate', '<=', f.to);
  // The page's keys first (the list index alone, index-only: an OFFSET skips index entries, not
  // rows), then those rows; limit + 1 tells whether there is a next page.
  const keys = q
    .clone()
    .select(keyset.columns.map((c) => c.column))
    .orderBy(keysetOrder(keyset))
    .limit(f.limit + 1)
    .offset(f.cursor !== undefined ? 0 : (f.page - 1) * f.limit);
  if (!sync && f.cursor !== undefined) applyKeyset(keys, keyset, decodeCursor(keyset, f.cursor));
  // A sync page counts the changes still ahead of its cursor (the sync index range, docs/sync.md);
  // the list sums the counters.
  const totalQuery = sync ? q.clone().count({ total: '*' }) : countQuery(db, tenantId, f, q);
  // The page's rows with their items, customer, payments and related number as JSON, and the
  // total, in one statement (the single read's columns, without deliveries): round trips were
  // most of a list request's cost on a busy host, and JSON columns parse natively (docs/lists.md).
  // An empty page carries no total, so that one case asks for it on its own.
  const rows: ListPageRow[] = await db
    .withMaterialized('p', keys)
    .from('p')
    .join('invoices as i', 'i.id', 'p.id')
    .join('tenants as t', 't.id', 'i.tenantId')
    .where('i.tenantId', tenantId)
    .select(
      't.country as tenantCountry',
      db.raw(`${SINGLE_READ_INVOICE}, ${RELATED_JSON}, ${isoSql('i.deleted_at')} as "deletedAt", ${keyColumns(keyset, 'p')}, (?) as "listTotal"`, [totalQuery]),
    )
    .orderBy(keysetOrder(keyset, 'p'));
  const count = Number(rows.length ? rows[0].listTotal : ((await totalQuery) as Array<{ total: number | string }>)[0].total);
  const nextCursor = nextCursorOf(keyset, rows, f.limit);
  const data = rows.slice(0, f.limit).map((r) => ({
    ...assembleViews(
      [r.invoiceJson],
      {
        tenantCountry: r.tenantCountry,
        items: r.itemsJson,
        customers: r.customerJson ? [r.customerJson] : [],
        payments: r.paymentsJson,
        related: r.relatedJson ? [r.relatedJson] : [],
        deliveries: [],
      },
      {},
    )[0],
    deletedAt: r.deletedAt,
  }));
  return { data, pagination: { ...pageEnvelope(f, count), nextCursor } };
}

/**
 * The exact number of live invoices matching the list's filters, from the counters the triggers
 * of migration 20261127193517 keep (docs/lists.md): a sum over (type, status, day) rows of the
 * tenant, or of one customer or supplier, within from/to. Both customerId and supplierId at once
 * (an invoice has one or the other in practice) is counted on the rows, within that customer's
 * index range.
 */
function countQuery(db: Db, tenantId: string, f: InvoiceListFilters, rows: Knex.QueryBuilder): Knex.QueryBuilder {
  if (f.customerId && f.supplierId) return rows.clone().count({ total: '*' });
  const party = f.customerId ? { party: 'c', partyId: f.customerId } : f.supplierId ? { party: 's', partyId: f.supplierId } : null;
  const c = db(party ? 'invoicePartyCounts' : 'invoiceDayCounts').where({ tenantId, ...(party ?? {}) });
  if (f.type) c.where('type', f.type);
  if (f.status) c.where('status', f.status);
  if (f.from) c.where('issueDate', '>=', f.from);
  if (f.to) c.where('issueDate', '<=', f.to);
  return c.select(db.raw('coalesce(sum(n), 0)::bigint as total'));
}
