import type { Knex } from 'knex';
import { AppError, invalidInput, notFound, unprocessable, type ErrorDetail } from '../errors';
import { computeTotals, type InvoiceTotals } from '../domain/invoiceTotals';
import { dec, fmtMoney, isValidQuantity } from '../domain/money';
import { normalizeAllowedRate, taxRateMessage } from '../domain/taxRates';
import { formatInvoiceNumber, NUMBERED_TYPES } from '../domain/numbering';
import type { InvoiceType } from '../domain/invoiceView';
import { isCurrency } from '../domain/currencies';
import { servicePeriodProblem } from '../domain/dates';
import { camelCaseKeys, isKnexSql, runCompiled, runCompiledSql, type Db } from '../db';
import { VIEW_COLUMNS } from '../queries/invoices';
import { auditOfInserted } from '../audit';
import type { Actor } from '../actor';

/** Building blocks shared by the invoice use cases. Everything runs inside the caller's transaction. */
export interface InvoiceItemInput {
  description: string;
  quantity: number | string;
  unit?: string | null;
  unitPrice: string;
  taxRate: string;
  /** Ignored: positions are the array order, renumbered 1..N (spec rule 1). */
  position?: number;
}

export interface InvoiceInput {
  type?: InvoiceType;
  customerId?: string | null;
  supplierId?: string | null;
  items?: InvoiceItemInput[];
  notes?: string | null;
  paymentTermDays?: number | null;
  issueDate?: string | null;
  serviceDate?: string | null;
  /** Last day of the service period that starts on serviceDate (null: a single day). */
  serviceEndDate?: string | null;
  footerText?: string | null;
  customFields?: Record<string, string> | null;
  detailsMarkdown?: string | null;
  currency?: string | null;
  expectedTotalGross?: string | null;
  invoiceNumber?: string | null;
  invoiceDate?: string | null;
  relatedInvoiceId?: string | null;
  /** Incoming invoices created by the webhook pipeline (not accepted over the API). */
  source?: string | null;
  externalId?: string | null;
}

export type InvoiceRow = Record<string, any>;

/** The invoice row locked FOR UPDATE (404 if missing, deleted or another tenant's). */
export async function lockInvoice(trx: Knex.Transaction, tenantId: string, id: string): Promise<InvoiceRow> {
  const row = await trx('invoices').where({ tenantId, id }).whereNull('deletedAt').forUpdate().first();
  if (!row) throw notFound('Invoice');
  return row;
}

export async function loadTenant(trx: Db, tenantId: string): Promise<InvoiceRow> {
  const t = await trx('tenants').where({ id: tenantId }).first();
  if (!t) throw notFound('Tenant');
  return t;
}

/**
 * A customer that may receive a new invoice: exists in this tenant and is not deleted. Locked
 * FOR SHARE so a concurrent customer delete waits for this transaction (and then sees the
 * invoice). A bad reference in a body is 400 on that field, not 404.
 */
export async function activeCustomer(trx: Knex.Transaction, tenantId: string, customerId: string, field = 'customerId'): Promise<InvoiceRow> {
  return usableCustomer(await trx('customers').where({ tenantId, id: customerId }).forShare().first(), field);
}

function usableCustomer(c: InvoiceRow | null | undefined, field: string): InvoiceRow {
  if (!c) throw invalidInput('Invalid customer', [{ field, message: 'customer does not exist' }]);
  if (c.deletedAt) throw customerDeleted(field);
  return c;
}

const customerDeleted = (field: string) => invalidInput('Invalid customer', [{ field, message: 'customer has been deleted and cannot get new invoices' }]);

export async function activeSupplier(trx: Db, tenantId: string, supplierId: string): Promise<InvoiceRow> {
  const s = await trx('suppliers').where({ tenantId, id: supplierId }).forShare().first();
  if (!s || s.deletedAt) {
    throw invalidInput('Invalid supplier', [{ field: 'supplierId', message: s ? 'supplier has been deleted' : 'supplier does not exist' }]);
  }
  return s;
}

/**
 * The tenant and, for an invoice to a customer, that customer (checked as activeCustomer() does)
 * in one statement: creating an invoice is a handful of round trips, and on a busy database host
 * each costs more than the query (docs/benchmarks.md). No lock here: the insert statement
 * re-checks the customer and locks it (insertInvoiceWithItems).
 */
export async function loadTenantAndCustomer(
  trx: Db,
  tenantId: string,
  customerId: string | null | undefined,
): Promise<{ tenant: InvoiceRow; customer: InvoiceRow | null }> {
  if (!customerId) return { tenant: await loadTenant(trx, tenantId), customer: null };
  const rows = await runCompiledSql(
    trx,
    `select t.country, t.currency,
       (select row_to_json(c) from customers c where c.tenant_id = t.id and c.id = ?) as customer
     from tenants t where t.id = ?`,
    [customerId, tenantId],
  );
  if (!rows.length) throw notFound('Tenant');
  const { customer, ...tenant } = rows[0] as InvoiceRow;
  return { tenant, customer: usableCustomer(customer ? camelCaseKeys<InvoiceRow>(customer) : null, 'customerId') };
}

export interface PreparedItems {
  items: Array<{ description: string; unit: string | null }>;
  totals: InvoiceTotals;
}

/** Check items against the tenant's tax rates and quantity rules, then compute the totals. */
export function prepareItems(items: InvoiceItemInput[] | undefined, country: string): PreparedItems {
  if (!items?.length) throw invalidInput('Invoice failed validation', [{ field: 'items', message: 'must contain at least one item' }]);
  const details: ErrorDetail[] = [];
  const normalized = items.map((it, i) => {
    const rate = typeof it.taxRate === 'string' ? normalizeAllowedRate(it.taxRate, country) : null;
    if (rate === null) details.push({ field: `items.${i}.taxRate`, message: taxRateMessage(country) });
    if (!isValidQuantity(it.quantity)) {
      details.push({ field: `items.${i}.quantity`, message: 'must be greater than 0 with at most 4 decimal places' });
    }
    if (typeof it.description !== 'string' || !it.description.trim()) details.push({ field: `items.${i}.description`, message: 'must not be empty' });
    return { quantity: it.quantity, unitPrice: it.unitPrice, taxRate: rate ?? '0' };
  });
  if (details.length) throw invalidInput('Invoice failed validation', details);
  return {
    items: items.map((it) => ({ description: it.description.trim(), unit: it.unit?.trim() || null })),
    totals: computeTotals(normalized),
  };
}

/** Replace an invoice's items with the prepared ones, positions 1..N in array order. */
/** Write an invoice's items; `replace` first removes the existing ones (full update of a draft). */
export async function writeItems(
  trx: Knex.Transaction,
  tenantId: string,
  invoiceId: string,
  prepared: PreparedItems,
  opts: { replace?: boolean } = {},
): Promise<Record<string, unknown>[]> {
  if (opts.replace) await trx('invoiceItems').where({ tenantId, invoiceId }).delete();
  return trx('invoiceItems').insert(itemRows(tenantId, invoiceId, prepared), '*');
}

/** The item rows prepareItems() describes, as written for invoice `invoiceId` (positions 1..N). */
export function itemRows(tenantId: string, invoiceId: string, prepared: PreparedItems) {
  return prepared.items.map((it, i) => {
    const t = prepared.totals.lines[i];
    return {
      tenantId,
      invoiceId,
      position: i + 1,
      description: it.description,
      unit: it.unit,
      quantity: t.quantity,
      unitPrice: t.unitPrice,
      taxRate: t.taxRate,
      netAmount: t.netAmount,
      taxAmount: t.taxAmount,
      grossAmount: t.grossAmount,
    };
  });
}

/**
 * Insert an invoice, its items, its audit row and optionally one payment in one statement
 * (data-modifying CTEs). With `customerId` the statement re-checks and locks the customer FOR
 * SHARE, so it is atomic without a transaction: a customer deleted meanwhile leaves tenant_id NULL
 * and the NOT NULL constraint refuses all of it. `skipExistingExternalId`: an existing (source,
 * externalId) inserts nothing and returns null, without an error that would spoil the transaction.
 */
export async function insertInvoiceWithItems(
  db: Db,
  columns: Record<string, unknown> & { tenantId: string },
  prepared: PreparedItems,
  audited: { actor: Actor; action: string; data: Record<string, unknown> },
  opts: { customerId?: string | null; payment?: { amount: string; date: string; method: string }; skipExistingExternalId?: boolean } = {},
): Promise<{ row: InvoiceRow; items: InvoiceRow[] } | null> {
  const { customerId, payment } = opts;
  const items = itemRows(columns.tenantId, '', prepared);
  // Compiled once per shape (runCompiled): the columns written, those given as SQL (now()) with
  // their text, and the options. Every other value is an argument: the column values, then
  // `extra`'s, in their key order.
  const keys = Object.keys(columns).filter((k) => columns[k] !== undefined);
  const sqlKeys = keys.filter((k) => isKnexSql(columns[k]));
  const valueKeys = keys.filter((k) => !isKnexSql(columns[k]));
  const extra: Record<string, unknown> = {
    items: JSON.stringify(items),
    actorUserId: audited.actor.userId ?? null,
    action: audited.action,
    data: JSON.stringify(audited.data),
    requestId: audited.actor.requestId ?? null,
    ...(customerId ? { customerId } : {}),
    ...(payment ? { paymentAmount: payment.amount, paymentDate: payment.date, paymentMethod: payment.method } : {}),
  };
  const extraKeys = Object.keys(extra);
  const shape = [
    'invoice-insert',
    valueKeys.join(','),
    sqlKeys.map((k) => `${k}=${JSON.stringify((columns[k] as Knex.Raw).toSQL().toNative())}`).join(','),
    extraKeys.join(','),
    opts.skipExistingExternalId ? 'skip-existing' : '',
  ].join('|');
  const args = [...valueKeys.map((k) => columns[k]), ...Object.values(extra)];
  // Named columns, not `*`: the statement is prepared, and a later column must not change its result.
  const returned = ['tenantId', ...VIEW_COLUMNS];
  const build = (...a: unknown[]) => {
    const at = (name: string) => a[valueKeys.length + extraKeys.indexOf(name)] as Knex.Value;
    const values: Record<string, unknown> = Object.fromEntries(valueKeys.map((k, i) => [k, a[i]]));
    for (const k of sqlKeys) values[k] = columns[k];
    let q = db.queryBuilder();
    if (customerId) {
      // The tenant's id is bound here; the invoice takes it from the guard.
      q = q.with(
        'guard',
        db.raw('select tenant_id from customers where tenant_id = ? and id = ? and deleted_at is null for share', [
          values.tenantId as Knex.Value,
          at('customerId'),
        ]),
      );
      values.tenantId = db.raw('(select tenant_id from guard)');
    }
    let insert = db('invoices').insert(values);
    if (opts.skipExistingExternalId) insert = insert.onConflict(db.raw('(tenant_id, source, external_id) where external_id is not null')).ignore();
    q = q
      .with('inv', insert.returning(returned))
      .with(
        'items',
        db.raw(
          `insert into invoice_items (tenant_id, invoice_id, position, description, unit, quantity, unit_price, tax_rate, net_amount, tax_amount, gross_amount)
           select inv.tenant_id, inv.id, x.position, x.description, x.unit, x.quantity, x."unitPrice", x."taxRate", x."netAmount", x."taxAmount", x."grossAmount"
           from inv, json_to_recordset(?::json) as x(position int, description text, unit text, quantity numeric, "unitPrice" numeric,
             "taxRate" numeric, "netAmount" numeric, "taxAmount" numeric, "grossAmount" numeric)`,
          [at('items')],
        ),
      )
      .with(
        'audit',
        auditOfInserted(db, 'inv', {
          actorUserId: at('actorUserId') as string | null,
          action: at('action') as string,
          entityType: 'invoice',
          dataJson: at('data') as string,
          requestId: at('requestId') as string | null,
        }),
      );
    if (payment) {
      q = q.with(
        'payment',
        db.raw('insert into payments (tenant_id, invoice_id, amount, date, method) select inv.tenant_id, inv.id, ?::numeric, ?::date, ? from inv', [
          at('paymentAmount'),
          at('paymentDate'),
          at('paymentMethod'),
        ]),
      );
    }
    return q.select(returned).from('inv');
  };
  let row: InvoiceRow | undefined;
  try {
    [row] = await runCompiled<InvoiceRow>(db, shape, args, build);
  } catch (err) {
    const e = err as { code?: string; table?: string; column?: string };
    if (customerId && e.code === '23502' && e.table === 'invoices' && e.column === 'tenant_id') throw customerDeleted('customerId');
    throw err;
  }
  if (!row) return null;
  const invoiceId = row.id as string;
  return { row, items: items.map((it) => ({ ...it, invoiceId })) };
}

export const totalsColumns = (t: InvoiceTotals) => ({
  totalNet: t.totalNet,
  totalTax: t.totalTax,
  totalGross: t.totalGross,
  taxBreakdown: JSON.stringify(t.taxBreakdown),
});

/** The client's expected total must match ours to the cent (the spec's "invoice total mismatch"). */
export function checkExpectedTotal(expected: string | null | undefined, computed: string): void {
  if (expected == null) return;
  if (!dec(expected).equals(dec(computed))) {
    throw unprocessable(`Invoice total mismatch: expected ${fmtMoney(expected)}, computed ${computed}`, {
      expected: fmtMoney(expected),
      computed,
    });
  }
}

export function checkNotNegative(totals: InvoiceTotals, allowNegative = false): void {
  if (!allowNegative && dec(totals.totalGross).isNegative()) {
    throw unprocessable(`The invoice total must not be negative (computed ${totals.totalGross}); issue a credit note (gutschrift) instead`, {
      computed: totals.totalGross,
    });
  }
}

/**
 * Next gapless number for (tenant, type, year): an atomic upsert on the sequence row inside the
 * finalizing transaction. The row lock it takes serializes concurrent finalizations of the same
 * series, and a rollback returns the number, so the series has no gaps.
 */
export async function nextInvoiceNumber(trx: Knex.Transaction, tenantId: string, type: InvoiceType, year: number, month = 1): Promise<string> {
  const res = await trx.raw(
    `insert into invoice_number_sequences (tenant_id, type, year, last_value) values (?, ?, ?, 1)
     on conflict (tenant_id, type, year) do update set last_value = invoice_number_sequences.last_value + 1
     returning last_value`,
    [tenantId, type, year],
  );
  const row = res.rows[0] as { lastValue?: number; last_value?: number };
  const tenant = await trx('tenants').where({ id: tenantId }).first('settings');
  const pattern = (tenant?.settings?.numberFormats as Record<string, string> | undefined)?.[type];
  const number = formatInvoiceNumber(type, year, Number(row.lastValue ?? row.last_value), pattern, month);
  // Numbers are unique across types (§ 11 UStG AT, § 14 UStG DE). The settings refuse formats of
  // two types that can meet, but not a new format meeting a number an old one already issued
  // (gutschrift switched to RE-{YYYY}-{NNNNN}); the unique index is per type. Refused here, the
  // counter increment rolls back with the send: the series stays gapless.
  const others = NUMBERED_TYPES.filter((t) => t !== type);
  const taken = await trx('invoices').where({ tenantId, number }).whereIn('type', others).first('type');
  if (taken) {
    throw new AppError(
      'DUPLICATE',
      409,
      `The number ${number} is already on a document of type ${taken.type}: change the number format of ${type} in the settings`,
      [{ field: `numberFormats.${type}`, message: `gives ${number}, which a ${taken.type} already has` }],
    );
  }
  return number;
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

/**
 * Field rules that depend on the type, shared by create and full update. On a non-credit note
 * relatedInvoiceId is not the client's to set: convert links the new draft to its quote. A full
 * update passes that stored link as `storedRelatedInvoiceId`, so a client echoing the invoice it
 * read back is accepted (updateInvoice keeps the stored link) and only a different one
 * is refused.
 */
export function typeFieldDetails(type: InvoiceType | undefined, input: InvoiceInput, storedRelatedInvoiceId: string | null = null): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  if (input.detailsMarkdown != null && type !== 'angebot') details.push({ field: 'detailsMarkdown', message: 'is only allowed on quotes (angebot)' });
  if (input.relatedInvoiceId && type !== 'gutschrift' && input.relatedInvoiceId !== storedRelatedInvoiceId) {
    details.push({ field: 'relatedInvoiceId', message: 'is only allowed on credit notes (gutschrift)' });
  }
  if (input.currency && !isCurrency(input.currency)) details.push({ field: 'currency', message: 'must be a supported ISO 4217 currency code' });
  const period = servicePeriodProblem(input.serviceDate, input.serviceEndDate);
  if (period) details.push({ field: 'serviceEndDate', message: period });
  return details;
}

const TYPE_NAMES: Record<string, string> = {
  angebot: 'a quote (angebot)',
  gutschrift: 'a credit note (gutschrift)',
  eingangsrechnung: 'an incoming invoice (eingangsrechnung)',
};

/**
 * A credit note's related invoice is the invoice it corrects, and the documents print it so
 * (§ 11 UStG AT / § 14 UStG DE): a finalized rechnung of this tenant, not deleted (storniert
 * counts), same customer and currency; else 400 INVALID_INPUT on relatedInvoiceId. Links the
 * service writes itself (convert, webhook refunds, cancel) are not checked here.
 */
export async function assertRelatedInvoice(
  trx: Db,
  tenantId: string,
  relatedInvoiceId: string | null | undefined,
  creditNote: { customerId: string | null | undefined; currency: string | null | undefined },
): Promise<{ id: string; number: string | null } | null> {
  if (!relatedInvoiceId) return null;
  const rel = await trx('invoices')
    .where({ tenantId, id: relatedInvoiceId })
    .whereNull('deletedAt')
    .first('id', 'number', 'type', 'status', 'customerId', 'currency');
  const fail = (messages: string[]) =>
    invalidInput(
      'Invoice failed validation',
      messages.map((message) => ({ field: 'relatedInvoiceId', message })),
    );
  if (!rel) throw fail(['invoice does not exist']);
  if (rel.type !== 'rechnung') throw fail([`must be a sales invoice (rechnung) that the credit note corrects, not ${TYPE_NAMES[rel.type] ?? rel.type}`]);
  const problems: string[] = [];
  if (rel.status === 'entwurf') problems.push('must be a finalized (sent) invoice, not a draft: a draft has no number to refer to');
  if (rel.customerId !== (creditNote.customerId ?? null)) problems.push('belongs to another customer: a credit note corrects an invoice to its own customer');
  if (creditNote.currency && rel.currency !== creditNote.currency)
    problems.push(`is in ${rel.currency}, the credit note in ${creditNote.currency}: a credit note corrects an invoice in the same currency`);
  if (problems.length) throw fail(problems);
  return { id: rel.id, number: rel.number };
}

/** The columns a draft's content consists of, as create and full update write them. */
export function contentColumns(input: InvoiceInput) {
  return {
    supplierId: input.supplierId ?? null,
    serviceDate: input.serviceDate ?? null,
    serviceEndDate: input.serviceEndDate ?? null,
    paymentTermDays: input.paymentTermDays ?? null,
    notes: input.notes ?? null,
    footerText: input.footerText ?? null,
    customFields: JSON.stringify(input.customFields ?? {}),
    detailsMarkdown: input.detailsMarkdown ?? null,
    relatedInvoiceId: input.relatedInvoiceId ?? null,
    invoiceNumber: input.invoiceNumber ?? null,
    invoiceDate: input.invoiceDate ?? null,
  };
}
