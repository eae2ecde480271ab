/**
 * The DATEV export's bookings as the export read them before issue 31 (commit 8d6ccfd): a
 * lateral join for the 0 % split, amounts rounded by datevPosting (decimal.js), one booking
 * object per row. Kept verbatim as the oracle the streamed text path must equal
 * (test/api/reports/datevStream.test.ts); not used by the service.
 */
import type { Knex } from 'knex';
import { db as defaultDb } from '../../shared/db';
import type { TaxPeriod } from '../../shared/domain/tax/period';
import type { InvoiceType } from '../../shared/domain/invoiceView';
import type { TaxCategory } from '../../shared/domain/tax/vatCategory';
import { datevPosting, type DatevBookingSource } from '../../shared/domain/tax/datevMapping';
import type { DatevBooking } from '../../shared/formats/datev/extfBuchungsstapel';
import {
  EU_VAT_PREFIXES,
  eurSql,
  EXPORT_SQL,
  exportBindings,
  FINALIZED_STATUSES,
  INPUT_TAX_EXCLUDED_STATUSES,
  REVERSE_CHARGE_SQL,
  vatPrefixOf,
} from '../../shared/queries/reports/vatAggregates';
import type { ReportTenant } from '../../shared/queries/reports/vatReturn';
import { clearingAccountSql, expenseAccountSql } from '../../shared/queries/reports/expenseAccount';
import { inBooksSql, paymentsInBooksSql } from '../../shared/queries/reports/books';
import { datevChartOf } from '../../shared/queries/reports/datev';

const FETCH_SIZE = 2000;
const PROVIDER_REFUND_SQL = `i.type = 'eingangsrechnung' and i.source is not null and i.total_gross < 0
  and i.status <> all(?::text[]) and ${inBooksSql('i')}`;

async function* cursor<Row>(trx: Knex.Transaction, name: string, sql: string, bindings: unknown[]): AsyncGenerator<Row[]> {
  await trx.raw(`declare ${name} no scroll cursor for ${sql}`, bindings as Knex.RawBinding[]);
  const fetchNext = () => {
    const p = trx.raw(`fetch ${FETCH_SIZE} from ${name}`).then((r: { rows: Row[] }) => r.rows);
    p.catch(() => undefined); // awaited below; a consumer that stops early leaves one in flight
    return p;
  };
  // One FETCH ahead: PostgreSQL reads the next batch while this one is formatted.
  let next = fetchNext();
  for (;;) {
    const rows = await next;
    if (!rows.length) break;
    next = fetchNext();
    yield rows;
  }
  await trx.raw(`close ${name}`);
}

/** Each batch of rows as the bookings `toBooking` makes of them (null: no booking for that row). */
async function* bookingsOf<Row>(batches: AsyncIterable<Row[]>, toBooking: (row: Row) => DatevBooking | null): AsyncGenerator<DatevBooking[]> {
  for await (const rows of batches) {
    const bookings: DatevBooking[] = [];
    for (const r of rows) {
      const b = toBooking(r);
      if (b) bookings.push(b);
    }
    if (bookings.length) yield bookings;
  }
}

const text = (number: string | null, partner: string | null) => [number, partner].filter(Boolean).join(' ');

// The cursors' rows, as their statements name the columns (amounts as decimal text, dates YYYY-MM-DD).
interface SalesRow {
  type: 'rechnung' | 'gutschrift';
  number: string | null;
  date: string;
  serviceDate: string | null;
  partner: string | null;
  taxRate: string;
  gross: string;
  /** Of the 0 % rows only (null for rates above 0 and for legacy unclassified lines). */
  taxCategory: TaxCategory | null;
  exemptionReason: string | null;
  reverseCharge: boolean;
  export: boolean;
}

interface IncomingRow {
  number: string | null;
  date: string;
  partner: string | null;
  /** Never null: the chart's default account is the last fallback (expenseAccountSql). */
  expenseAccount: string;
  taxRate: string;
  gross: string;
  taxCategory: TaxCategory | null;
}

interface MoneyMovementRow {
  amount: string;
  date: string;
  type: InvoiceType;
  number: string | null;
  partner: string | null;
  moneyAccount: string | null;
}

/**
 * Every booking of the period, lazily, a batch at a time (one per FETCH); pass to datevCsvStream.
 * Amounts in EUR: a foreign-currency document's at its stored exchange rate (eurSql, per row; its
 * payments at the document's rate too). assertDatevExportable refuses such documents for now.
 */
export async function* referenceDatevBookings(tenant: ReportTenant, period: TaxPeriod, knex: Knex = defaultDb()): AsyncGenerator<DatevBooking[]> {
  const chart = datevChartOf(tenant);
  const trx = await knex.transaction();
  try {
    await trx.raw('set transaction isolation level repeatable read, read only');
    // The row estimates of the tax breakdown's jsonb_array_elements (100 per invoice) make a year's
    // cursor look big enough for JIT compilation, which then costs more than running it
    // (docs/benchmarks.md).
    await trx.raw('set local jit = off');
    const emit = (
      source: DatevBookingSource,
      date: string,
      number: string | null,
      partner: string | null,
      serviceDate?: string | null,
    ): DatevBooking | null => {
      const p = datevPosting(chart, source);
      if (!p) return null;
      // Every field named, one object shape for all rows (spreads made each row's object slow to build and to read).
      return {
        amount: p.amount,
        debitCredit: p.debitCredit,
        account: p.account,
        contraAccount: p.contraAccount,
        buKey: p.buKey,
        currency: 'EUR',
        documentDate: date,
        documentField1: number ?? undefined,
        text: text(number, partner),
        serviceDate: serviceDate ?? undefined,
      };
    };

    // Hand-written cursors: a year's bookings stream in batches without a row object per model.
    const sales = cursor<SalesRow>(
      trx,
      'datev_sales',
      // DATEV's Leistungsdatum is one day: of a service period its last, when the service is complete.
      `select i.type, i.number, i.issue_date as "date", coalesce(i.service_end_date, i.service_date) as "serviceDate",
              coalesce(i.customer_snapshot->>'company', i.customer_snapshot->>'name') as "partner",
              tb->>'taxRate' as "taxRate", ${eurSql("coalesce(z.net, (tb->>'net')::numeric + (tb->>'tax')::numeric)")}::text as "gross",
              z.category as "taxCategory", z.reason as "exemptionReason",
              coalesce(${REVERSE_CHARGE_SQL}, false) as "reverseCharge", (${EXPORT_SQL}) as "export"
         from invoices i cross join lateral jsonb_array_elements(i.tax_breakdown) tb
         -- The 0 % group split by the lines' stored category (and exemption reason): a row per
         -- invoice, rate and category. Rates above 0 are standard and keep the breakdown's tax.
         left join lateral (
           select ii.tax_category as category, ii.exemption_reason as reason, sum(ii.net_amount) as net
             from invoice_items ii
            where ii.invoice_id = i.id and ii.tax_rate = 0 and (tb->>'taxRate')::numeric = 0
            group by ii.tax_category, ii.exemption_reason
         ) z on true
        where i.tenant_id = ? and i.type in ('rechnung', 'gutschrift') and i.status = any(?::text[])
          and ${inBooksSql('i')} and i.issue_date between ? and ?
        order by i.issue_date, i.id`,
      [EU_VAT_PREFIXES, vatPrefixOf(tenant.country), ...exportBindings(tenant.country), tenant.id, [...FINALIZED_STATUSES], period.start, period.end],
    );
    yield* bookingsOf(sales, (r) =>
      emit(
        {
          kind: 'salesInvoice',
          taxRate: r.taxRate,
          gross: r.type === 'gutschrift' ? negate(r.gross) : r.gross,
          taxCategory: r.taxCategory,
          exemptionReason: r.exemptionReason,
          // Legacy lines without a category: the inference the export always made.
          zeroRateKind: r.reverseCharge ? 'reverseChargeEu' : r.export ? 'export' : 'taxFree',
        },
        r.date,
        r.number,
        r.partner,
        r.serviceDate,
      ),
    );

    const x = expenseAccountSql(chart);
    const smallBusiness = tenant.settings?.smallBusiness === true;
    const incoming = cursor<IncomingRow>(
      trx,
      'datev_incoming',
      `select i.invoice_number as "number", i.invoice_date as "date", s.name as "partner",
              ${x.account} as "expenseAccount",
              tb->>'taxRate' as "taxRate", ${eurSql("coalesce(z.net, (tb->>'net')::numeric + (tb->>'tax')::numeric)")}::text as "gross",
              z.category as "taxCategory"
         from invoices i ${x.joins}
         cross join lateral jsonb_array_elements(i.tax_breakdown) tb
         -- As for sales: the 0 % group per category (reverse charge, ig. Erwerb get their BU key);
         -- and a rate's foreign VAT lines (docs/vat-categories.md), booked at their gross without a key.
         left join lateral (
           select ii.tax_category as category, sum(ii.gross_amount) as net
             from invoice_items ii
            where ii.invoice_id = i.id and ii.tax_rate = (tb->>'taxRate')::numeric
              and (ii.tax_rate = 0 or ii.tax_category = 'foreignVat')
            group by ii.tax_category
         ) z on true
        where i.tenant_id = ? and i.type = 'eingangsrechnung' and i.status <> all(?::text[])
          and ${inBooksSql('i')} and i.invoice_date between ? and ?
        order by i.invoice_date, i.id`,
      [tenant.id, [...INPUT_TAX_EXCLUDED_STATUSES], period.start, period.end],
    );
    // The account the ledger uses (assertDatevExportable checked its form before streaming).
    yield* bookingsOf(incoming, (r) =>
      emit(
        { kind: 'incomingInvoice', taxRate: r.taxRate, gross: r.gross, expenseAccount: r.expenseAccount, taxCategory: r.taxCategory, smallBusiness },
        r.date,
        r.number,
        r.partner,
      ),
    );

    // Money movements by date: the payment records (not those of a void, cancelled incoming
    // invoice: books.ts), and a provider's refund, its own money movement without a payment
    // record. A provider's money sits on the ledger's clearing account (clearingAccountSql), hand-
    // entered documents keep the bank (worked example: docs/reports.md, "DATEV Buchungsstapel").
    const c = clearingAccountSql(chart);
    const payments = cursor<MoneyMovementRow>(
      trx,
      'datev_payments',
      `select m.amount, m.date, m.type, m.number, m.partner, m."moneyAccount"
         from (select p.id, ${eurSql('p.amount')}::text as "amount", p.date as "date", i.type,
                      coalesce(i.number, i.invoice_number) as "number",
                      coalesce(i.customer_snapshot->>'company', i.customer_snapshot->>'name', s.name) as "partner",
                      ${c.account} as "moneyAccount"
                 from payments p
                 join invoices i on i.id = p.invoice_id
                 left join suppliers s on s.id = i.supplier_id ${c.joins}
                where p.tenant_id = ? and p.date between ? and ? and ${paymentsInBooksSql('i')}
               union all
               select i.id, ${eurSql('i.total_gross')}::text, i.invoice_date, i.type, i.invoice_number, s.name, ${c.account}
                 from invoices i
                 left join suppliers s on s.id = i.supplier_id ${c.joins}
                where i.tenant_id = ? and ${PROVIDER_REFUND_SQL} and i.invoice_date between ? and ?) m
        order by m.date, m.id`,
      [tenant.id, period.start, period.end, tenant.id, [...INPUT_TAX_EXCLUDED_STATUSES], period.start, period.end],
    );
    yield* bookingsOf(payments, (r) => {
      const incomingPayment = r.type === 'eingangsrechnung';
      // A payment on a credit note is money paid back to the customer: a reversed receipt. A
      // refund document's amount is negative already: money back from the supplier.
      const amount = r.type === 'gutschrift' ? negate(r.amount) : r.amount;
      return emit(
        { kind: 'payment', of: incomingPayment ? 'incomingInvoice' : 'salesInvoice', amount, clearingAccount: r.moneyAccount ?? undefined },
        r.date,
        r.number,
        r.partner,
      );
    });
  } finally {
    await trx.rollback().catch(() => undefined);
  }
}

const negate = (v: string) => (v.startsWith('-') ? v.slice(1) : `-${v}`);
