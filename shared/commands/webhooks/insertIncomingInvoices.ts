import type { Knex } from 'knex';
import { columnName, runCompiledSql } from '../../db';
import type { Actor } from '../../actor';
import { itemRows } from '../invoices/items';
import type { IncomingInvoiceValues } from './createIncomingInvoiceFromEvent';

/** One movement's incoming invoice to insert (incomingInvoiceValues) and who writes it. */
export interface IncomingInvoiceRow {
  values: IncomingInvoiceValues;
  actor: Actor;
}

/**
 * The incoming invoices of several movements, with their items, payment records and audit rows,
 * in ONE statement (bookPlainPayments: a batch's plain payments). Row for row what
 * createIncomingInvoiceFromEvent writes through insertInvoiceWithItems, the columns from the same
 * incomingInvoiceValues and finalized_at the transaction's time as there. An existing (tenant,
 * source, external id) is skipped by the unique index invoices_external_unique per row, without an
 * error: that movement is a duplicate and nothing of it is written. The rows must have distinct
 * (tenant, source, external id) (the caller leaves a second one out). Returns the inserted
 * invoices' ids by `key(tenantId, source, externalId)`.
 *
 * The rows go as one jsonb array, so the text (one per column set, compiled once) and its plan
 * are the same for any number of rows; jsonb_populate_record turns each into an invoices row with
 * the columns' own types. Outbound events (invoice.created) are the caller's: it emits them in the
 * order the one-by-one path would.
 */
export async function insertIncomingInvoices(trx: Knex.Transaction, rows: readonly IncomingInvoiceRow[]): Promise<Map<string, string>> {
  if (!rows.length) return new Map();
  const keys = Object.keys(rows[0].values.columns).filter((k) => (rows[0].values.columns as Record<string, unknown>)[k] !== undefined);
  const payload = rows.map(({ values, actor }) => {
    const given = values.columns as Record<string, unknown>;
    const own = Object.keys(given).filter((k) => given[k] !== undefined);
    // One text per column set: a row with other columns would be written wrongly, not refused.
    if (own.length !== keys.length || own.some((k, i) => k !== keys[i])) throw new Error('insertIncomingInvoices: rows with different columns');
    return {
      ...Object.fromEntries(keys.map((k) => [columnName(k), given[k]])),
      _items: itemRows(values.columns.tenantId, '', values.prepared),
      _audit: values.auditData,
      _actor_user_id: actor.userId ?? null,
      _actor_api_key_id: actor.apiKeyId ?? null,
      _request_id: actor.requestId ?? null,
      _payment: values.payment,
    };
  });
  const cols = keys.map(columnName);
  const sql = `with v as (
      select r.value as j, r.ordinality as ord from jsonb_array_elements(cast(? as jsonb)) with ordinality r
    ), inv as (
      insert into invoices (${cols.join(', ')}, finalized_at)
      select ${cols.map((c) => `p.${c}`).join(', ')}, current_timestamp
        from v cross join lateral jsonb_populate_record(null::invoices, v.j) p
       order by v.ord
      on conflict (tenant_id, source, external_id) where external_id is not null do nothing
      returning tenant_id, id, source, external_id
    ), x as (
      select inv.tenant_id, inv.id, v.j, v.ord
        from inv join v on v.j ->> 'tenant_id' = inv.tenant_id::text and v.j ->> 'source' = inv.source and v.j ->> 'external_id' = inv.external_id
    ), items as (
      insert into invoice_items (tenant_id, invoice_id, position, description, unit, quantity, unit_price, tax_rate, net_amount, tax_amount, gross_amount,
                                 tax_category, exemption_reason, exemption_note, tax_category_given)
      select x.tenant_id, x.id, it.position, it.description, it.unit, it.quantity, it."unitPrice", it."taxRate", it."netAmount", it."taxAmount", it."grossAmount",
             it."taxCategory", it."exemptionReason", it."exemptionNote", coalesce(it."taxCategoryGiven", false)
        from x cross join lateral jsonb_to_recordset(x.j -> '_items') as it(position int, description text, unit text, quantity numeric, "unitPrice" numeric,
             "taxRate" numeric, "netAmount" numeric, "taxAmount" numeric, "grossAmount" numeric,
             "taxCategory" text, "exemptionReason" text, "exemptionNote" text, "taxCategoryGiven" boolean)
       order by x.ord, it.position
    ), audit as (
      insert into audit_log (tenant_id, actor_user_id, actor_api_key_id, action, entity_type, entity_id, data, request_id)
      select x.tenant_id, cast(x.j ->> '_actor_user_id' as uuid), cast(x.j ->> '_actor_api_key_id' as uuid), 'invoice.created', 'invoice', x.id,
             x.j -> '_audit', x.j ->> '_request_id'
        from x order by x.ord
    ), payment as (
      insert into payments (tenant_id, invoice_id, amount, date, method)
      select x.tenant_id, x.id, cast(x.j -> '_payment' ->> 'amount' as numeric), cast(x.j -> '_payment' ->> 'date' as date), x.j -> '_payment' ->> 'method'
        from x where jsonb_typeof(x.j -> '_payment') = 'object' order by x.ord
    )
    select tenant_id, id, source, external_id from inv`;
  const written = await runCompiledSql<{ tenantId: string; id: string; source: string; externalId: string }>(trx, sql, [JSON.stringify(payload)]);
  return new Map(written.map((w) => [invoiceKey(w.tenantId, w.source, w.externalId), w.id]));
}

export const invoiceKey = (tenantId: string, source: string, externalId: string): string => `${tenantId}\u0000${source}\u0000${externalId}`;

/** The invoices that already hold these (tenant, source, external id), as the duplicate path reads each: one statement for all. */
export async function existingIncomingInvoices(
  trx: Knex.Transaction,
  wanted: readonly { tenantId: string; source: string; externalId: string }[],
): Promise<Map<string, string>> {
  if (!wanted.length) return new Map();
  const found = await runCompiledSql<{ tenantId: string; id: string; source: string; externalId: string }>(
    trx,
    `select i.tenant_id, i.id, i.source, i.external_id
       from unnest(cast(? as uuid[]), cast(? as text[]), cast(? as text[])) as w(tenant_id, source, external_id)
       join invoices i on i.tenant_id = w.tenant_id and i.source = w.source and i.external_id = w.external_id`,
    [wanted.map((w) => w.tenantId), wanted.map((w) => w.source), wanted.map((w) => w.externalId)],
  );
  return new Map(found.map((f) => [invoiceKey(f.tenantId, f.source, f.externalId), f.id]));
}
