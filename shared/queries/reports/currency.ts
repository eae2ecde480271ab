import type { Knex } from 'knex';
import { taxReportError } from '../../domain/tax/errors';
import { FINALIZED_STATUSES, INPUT_TAX_EXCLUDED_STATUSES } from './vatAggregates';
import { inBooksSql, paymentsInBooksSql } from './books';

/**
 * Reports are in EUR: a document in another currency counts at the exchange rate it stores
 * (docs/exchange-rates.md). One without a rate (written before invoices stored one, or a webhook
 * incoming invoice of a day the ECB feed had no rate for) is never summed as euros: 422
 * FOREIGN_CURRENCY names it for the user to give it a rate (docs/reports.md, "Currency"). One
 * query per report over the report's own index ranges.
 */
export interface DateRange {
  from: string;
  to: string;
}

export interface ForeignDocument {
  id: string;
  type: string;
  number: string | null;
  date: string;
  currency: string;
}

const LISTED = 10;

export async function findForeignCurrencyDocuments(
  db: Knex,
  tenantId: string,
  range: DateRange,
  opts: { payments?: boolean } = {},
): Promise<{ documents: ForeignDocument[]; total: number }> {
  const branches: Array<{ sql: string; bindings: unknown[] }> = [
    {
      sql: `select i.id, i.type, i.number, i.issue_date as "date", i.currency
              from invoices i
             where i.tenant_id = ? and i.type in ('rechnung', 'gutschrift') and i.status = any(?::text[])
               and ${inBooksSql('i')} and i.issue_date between ? and ? and i.currency <> 'EUR' and i.exchange_rate is null`,
      bindings: [tenantId, [...FINALIZED_STATUSES], range.from, range.to],
    },
    {
      sql: `select i.id, i.type, i.invoice_number as "number", i.invoice_date as "date", i.currency
              from invoices i
             where i.tenant_id = ? and i.type = 'eingangsrechnung' and i.status <> all(?::text[])
               and ${inBooksSql('i')} and i.invoice_date between ? and ? and i.currency <> 'EUR' and i.exchange_rate is null`,
      bindings: [tenantId, [...INPUT_TAX_EXCLUDED_STATUSES], range.from, range.to],
    },
  ];
  if (opts.payments) {
    // DATEV books payments too: a payment in the period on a foreign-currency invoice of any date
    // (not those of a void, cancelled incoming invoice: DATEV does not export them, books.ts).
    branches.push({
      sql: `select i.id, i.type, coalesce(i.number, i.invoice_number) as "number", p.date as "date", i.currency
              from payments p join invoices i on i.id = p.invoice_id and i.tenant_id = p.tenant_id
             where p.tenant_id = ? and p.date between ? and ? and ${paymentsInBooksSql('i')} and i.currency <> 'EUR' and i.exchange_rate is null`,
      bindings: [tenantId, range.from, range.to],
    });
  }
  const { rows } = await db.raw(
    `select d.*, count(*) over ()::int as "total"
       from (select distinct on (id) * from (${branches.map((b) => b.sql).join(' union all ')}) u order by id, "date") d
      order by d."date", d.number nulls last, d.id
      limit ${LISTED}`,
    branches.flatMap((b) => b.bindings) as Knex.RawBinding[],
  );
  const documents = (rows as Array<ForeignDocument & { total: number }>).map(({ total: _total, ...d }) => d);
  return { documents, total: rows.length ? (rows[0] as { total: number }).total : 0 };
}

const TYPE_LABEL: Record<string, string> = { rechnung: 'invoice', gutschrift: 'credit note', eingangsrechnung: 'incoming invoice' };

const describe = (d: ForeignDocument) => `${TYPE_LABEL[d.type] ?? d.type} ${d.number ?? `(no number, id ${d.id})`} of ${d.date} in ${d.currency}`;

/** 422 FOREIGN_CURRENCY when the report's selection holds a document not in EUR that has no exchange rate. */
export async function assertEurDocuments(db: Knex, tenantId: string, range: DateRange, what: string, opts: { payments?: boolean } = {}): Promise<void> {
  const { documents, total } = await findForeignCurrencyDocuments(db, tenantId, range, opts);
  if (total === 0) return;
  const more = total > documents.length ? ` and ${total - documents.length} more` : '';
  throw taxReportError(
    'FOREIGN_CURRENCY',
    `${what} is in EUR, but ${total} document(s) between ${range.from} and ${range.to} are not and have no exchange rate: ` +
      `${documents.map(describe).join('; ')}${more}. Give them their rate (exchangeRate, the ECB rate of the day or the BMF monthly average) and try again`,
    documents.map((d) => ({ field: 'documents', message: describe(d) })),
    { documents: documents.map((d) => ({ id: d.id, type: d.type, number: d.number, date: d.date, currency: d.currency })), total },
  );
}
