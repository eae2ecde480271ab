import type { Knex } from 'knex';
import type { ModelObject, PartialModelObject } from 'objection';
import { isKnexSql, isTransaction, runCompiled, type Db } from '../../db';
import { loadInvoiceView, VIEW_COLUMNS, type ViewColumn } from '../../queries/invoices';
import { invoiceCreatedEvent } from '../../domain/outboundWebhooks';
import { emitEvent } from '../outboundWebhooks/emitEvent';
import { auditOfInserted } from '../../audit';
import type { Actor } from '../../actor';
import type { PreparedItems } from '../../domain/invoiceChecks';
import { Invoice } from '../../models/Invoice';
import { itemRows, type NewInvoiceItem } from './items';
import { customerDeleted } from './references';

/** The columns of a new invoice: model values, or SQL such as now(). */
export type NewInvoiceColumns = PartialModelObject<Invoice> & { tenantId: string };

/** The invoice row the insert returns: the columns its view is built from. */
export type InsertedInvoice = Pick<ModelObject<Invoice>, 'tenantId' | ViewColumn>;

const JSON_COLUMNS: ReadonlySet<string> = new Set(Invoice.jsonAttributes);

/**
 * Insert an invoice, its items, its audit row and optionally one payment in one statement
 * (data-modifying CTEs). With `customerId` the statement re-checks and locks the customer FOR
 * SHARE, so it is atomic without a transaction: a customer deleted meanwhile leaves tenant_id NULL
 * and the NOT NULL constraint refuses all of it. `skipExistingExternalId`: an existing (source,
 * externalId) inserts nothing and returns null, without an error that would spoil the transaction.
 * Hand-written, not a model insert: one round trip and no model instances on the hottest write
 * (docs/data-layer.md).
 */
export async function insertInvoiceWithItems(
  db: Db,
  columns: NewInvoiceColumns,
  prepared: PreparedItems,
  audited: { actor: Actor; action: string; data: Record<string, unknown> },
  opts: { customerId?: string | null; payment?: { amount: string; date: string; method: string }; skipExistingExternalId?: boolean } = {},
): Promise<{ row: InsertedInvoice; items: NewInvoiceItem[] } | null> {
  const { customerId, payment } = opts;
  const items = itemRows(columns.tenantId, '', prepared);
  const given = columns as Record<string, unknown>;
  // Compiled once per shape (runCompiled): the columns written, those given as SQL (now()) with
  // their text, and the options. Every other value is an argument: the column values (jsonb as
  // JSON text, as objection would send it), then `extra`'s, in their key order.
  const keys = Object.keys(given).filter((k) => given[k] !== undefined);
  const sqlKeys = keys.filter((k) => isKnexSql(given[k]));
  const valueKeys = keys.filter((k) => !isKnexSql(given[k]));
  const extra: Record<string, unknown> = {
    items: JSON.stringify(items),
    actorUserId: audited.actor.userId ?? null,
    actorApiKeyId: audited.actor.apiKeyId ?? null,
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
    sqlKeys.map((k) => `${k}=${JSON.stringify((given[k] as Knex.Raw).toSQL().toNative())}`).join(','),
    extraKeys.join(','),
    opts.skipExistingExternalId ? 'skip-existing' : '',
  ].join('|');
  const args = [...valueKeys.map((k) => (JSON_COLUMNS.has(k) && given[k] !== null ? JSON.stringify(given[k]) : given[k])), ...Object.values(extra)];
  // Named columns, not `*`: the statement is prepared, and a later column must not change its result.
  const returned = ['tenantId', ...VIEW_COLUMNS];
  const build = (...a: unknown[]) => {
    const at = (name: string) => a[valueKeys.length + extraKeys.indexOf(name)] as Knex.Value;
    const values: Record<string, unknown> = Object.fromEntries(valueKeys.map((k, i) => [k, a[i]]));
    for (const k of sqlKeys) values[k] = given[k];
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
          `insert into invoice_items (tenant_id, invoice_id, position, description, unit, quantity, unit_price, tax_rate, net_amount, tax_amount, gross_amount,
                                      tax_category, exemption_reason, exemption_note, tax_category_given)
           select inv.tenant_id, inv.id, x.position, x.description, x.unit, x.quantity, x."unitPrice", x."taxRate", x."netAmount", x."taxAmount", x."grossAmount",
                  x."taxCategory", x."exemptionReason", x."exemptionNote", coalesce(x."taxCategoryGiven", false)
           from inv, json_to_recordset(?::json) as x(position int, description text, unit text, quantity numeric, "unitPrice" numeric,
             "taxRate" numeric, "netAmount" numeric, "taxAmount" numeric, "grossAmount" numeric,
             "taxCategory" text, "exemptionReason" text, "exemptionNote" text, "taxCategoryGiven" boolean)`,
          [at('items')],
        ),
      )
      .with(
        'audit',
        auditOfInserted(db, 'inv', {
          actorUserId: at('actorUserId') as string | null,
          actorApiKeyId: at('actorApiKeyId') as string | null,
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
  let row: InsertedInvoice | undefined;
  try {
    [row] = await runCompiled<InsertedInvoice>(db, shape, args, build);
  } catch (err) {
    const e = err as { code?: string; table?: string; column?: string };
    if (customerId && e.code === '23502' && e.table === 'invoices' && e.column === 'tenant_id') throw customerDeleted('customerId');
    throw err;
  }
  if (!row) return null;
  const invoiceId = row.id;
  // Every new invoice is an outbound webhook event in this statement's transaction
  // (docs/outbound-webhooks.md). Without a transaction (createInvoice's pool path) the caller has
  // found that no subscription wants it.
  if (isTransaction(db)) {
    const tenantId = columns.tenantId;
    await emitEvent({ trx: db, actor: { tenantId } }, invoiceCreatedEvent(columns.type as string), () => loadInvoiceView(db, tenantId, invoiceId));
  }
  return { row, items: items.map((it) => ({ ...it, invoiceId })) };
}
