import type { Readable } from 'node:stream';
import type { Knex } from 'knex';
import { db as defaultDb } from '../../db';
import { taxReportError } from '../../domain/tax/errors';
import { normalizeRate } from '../../domain/tax/amounts';
import type { TaxPeriod } from '../../domain/tax/period';
import type { InvoiceType } from '../../domain/invoiceView';
import type { TaxCategory } from '../../domain/tax/vatCategory';
import { CHARTS, type ChartName } from '../../domain/charts';
import { DATEV_CHARTS, datevPosting, datevSkrCode, type DatevChart, type DatevBookingSource } from '../../domain/tax/datevMapping';
import {
  CRLF,
  datevBookingLine,
  datevCsvTextStream,
  datevDocumentFields,
  datevPostingFields,
  encodeWindows1252,
  type DatevBooking,
  type DatevHeaderMeta,
} from '../../formats/datev/extfBuchungsstapel';
import {
  EU_VAT_PREFIXES,
  eurSql,
  EXPORT_SQL,
  exportBindings,
  FINALIZED_STATUSES,
  INPUT_TAX_EXCLUDED_STATUSES,
  REVERSE_CHARGE_SQL,
  vatPrefixOf,
} from './vatAggregates';
import type { ReportTenant } from './vatReturn';
import { assertEurDocuments } from './currency';
import { clearingAccountSql, expenseAccountSql } from './expenseAccount';
import { inBooksSql, paymentsInBooksSql } from './books';

/**
 * DATEV Buchungsstapel rows for one tenant and period, through server-side cursors in one
 * read-only repeatable-read transaction: sales, incoming and payments share one snapshot and
 * memory holds one batch. The transaction ends when iteration ends, fails or stops early (a client
 * that went away runs the generator's finally). Which rows: docs/reports.md, "DATEV Buchungsstapel".
 */
export const DEFAULT_DATEV_CONSULTANT = 1001;
export const DEFAULT_DATEV_CLIENT = 1;
/**
 * Sachkontenlänge of the batch. Every account we write is a 4-digit Sachkonto (the charts'
 * collective, revenue, bank and default expense accounts); DATEV reads each account number with
 * this length, so a 5-digit expense account from a supplier or connector setting would be read as
 * a personal account (or rejected) — assertDatevExportable refuses such a batch up front.
 */
export const DATEV_ACCOUNT_LENGTH = 4;
const FETCH_SIZE = 2000;

export function datevChartOf(tenant: Pick<ReportTenant, 'country' | 'settings'>): DatevChart {
  const chart = tenant.settings?.datev?.chart;
  if (chart === 'SKR03' || chart === 'SKR04' || chart === 'EKR') return chart;
  return tenant.country === 'DE' ? 'SKR03' : 'EKR';
}

function settingNumber(value: unknown, fallback: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const s = String(value).trim();
  return /^\d{1,7}$/.test(s) ? Number(s) : NaN; // NaN → the header writer answers 422 with the field name
}

export function datevMeta(tenant: ReportTenant, period: TaxPeriod, createdAt = new Date()): DatevHeaderMeta {
  const chart = datevChartOf(tenant);
  return {
    consultantNumber: settingNumber(tenant.settings?.datev?.consultantNumber, DEFAULT_DATEV_CONSULTANT),
    clientNumber: settingNumber(tenant.settings?.datev?.clientNumber, DEFAULT_DATEV_CLIENT),
    fiscalYearStart: `${period.year}-01-01`,
    accountLength: DATEV_ACCOUNT_LENGTH,
    periodFrom: period.start,
    periodTo: period.end,
    label: `Buchungsstapel ${period.label}`,
    createdAt,
    currency: 'EUR',
    skr: datevSkrCode(chart),
  };
}

export const datevFileName = (period: TaxPeriod) => `EXTF_Buchungsstapel_${period.kind === 'month' ? period.label : `${period.year}-Q${period.quarter}`}.csv`;

/**
 * Everything that could make the export fail or be wrong, checked before the first byte is sent
 * (a failure in the middle of the stream would break off a download that already answered 200):
 * every tax rate is mapped in the chart, every document is in EUR, every expense account has the
 * batch's account length. 422 naming what to fix.
 */
export async function assertDatevExportable(db: Knex, tenant: ReportTenant, period: TaxPeriod): Promise<void> {
  // Three index lookups at once (migration 20261127200000_datev_check_indexes): the tenant's rate
  // combinations, its documents without an exchange rate, and whether every account it could
  // book an incoming invoice on fits. Only accounts that might not fit send the two account
  // checks over the period's documents (then at once too, the clearing accounts' join in a
  // read-only transaction with the export's planner setting, DATEV_PLANNER_SQL). A failure is
  // reported in this order, as if one ran after the other.
  const [rates, currency, fit] = await Promise.allSettled([
    assertDatevRatesMapped(db, tenant, period),
    assertEurDocuments(db, tenant.id, { from: period.start, to: period.end }, `The DATEV export for ${period.label}`, { payments: true }),
    datevAccountsFit(db, tenant),
  ]);
  const accounts =
    fit.status === 'fulfilled' && fit.value
      ? []
      : await Promise.allSettled([
          assertDatevExpenseAccounts(db, tenant, period),
          db.transaction(
            async (trx) => {
              await trx.raw(DATEV_PLANNER_SQL);
              await assertDatevClearingAccounts(trx, tenant, period);
            },
            { readOnly: true },
          ),
        ]);
  for (const r of [rates, currency, ...accounts]) if (r.status === 'rejected') throw r.reason;
}

/** A Sachkonto of the batch's length: DATEV_ACCOUNT_LENGTH digits without a leading zero (in SQL: ASCII digits only). */
const ACCOUNT_FITS = new RegExp(`^[1-9]\\d{${DATEV_ACCOUNT_LENGTH - 1}}$`);
const ACCOUNT_FITS_SQL = `^[1-9][0-9]{${DATEV_ACCOUNT_LENGTH - 1}}$`;

/**
 * Whether every account an incoming invoice's expense or money row could be booked on fits the
 * batch, whatever the period: the tenant's ledger accounts in the chart (a posted entry's lines),
 * its active connectors' expense and clearing settings, its suppliers' default expense accounts
 * and the chart's defaults (expenseAccountSql, clearingAccountSql). A superset of what the
 * period's documents use, read from small tables: true lets the two checks over the period's
 * documents be skipped; false (an account somewhere does not fit) leaves it to them to tell
 * whether the period uses it.
 */
export async function datevAccountsFit(db: Knex, tenant: ReportTenant): Promise<boolean> {
  const chart = datevChartOf(tenant);
  const ledgerChart = chart in CHARTS ? CHARTS[chart as ChartName] : null;
  const defaults = [DATEV_CHARTS[chart].expense, ...(ledgerChart ? Object.values(ledgerChart.clearing) : [])];
  if (!defaults.every((a) => ACCOUNT_FITS.test(a))) return false;
  const { rows } = await db.raw(
    `select not exists (select 1 from ledger_accounts a where a.tenant_id = ? and a.chart = ? and a.number !~ ?)
        and not exists (select 1 from connector_installations ci
                         where ci.tenant_id = ? and ci.active
                           and (nullif(btrim(ci.settings->>'expenseAccount'), '') !~ ? or nullif(btrim(ci.settings->>'clearingAccount'), '') !~ ?))
        and not exists (select 1 from suppliers s where s.tenant_id = ? and nullif(btrim(s.default_expense_account), '') !~ ?) as "fit"`,
    [tenant.id, chart, ACCOUNT_FITS_SQL, tenant.id, ACCOUNT_FITS_SQL, ACCOUNT_FITS_SQL, tenant.id, ACCOUNT_FITS_SQL],
  );
  return rows[0].fit === true;
}

/**
 * For the export's statements: index lookups priced as what they are here (pages in cache), so
 * a period's payments join their invoices by primary key instead of a hash over every invoice
 * of every tenant (a quarter's payment rows: 290 → 50 ms at 100,000 invoices,
 * docs/benchmarks.md "DATEV"); and no JIT: the tax breakdown's row estimates
 * (jsonb_array_elements, 100 per invoice) make a year's cursor look big enough for JIT
 * compilation, which then costs more than running it.
 */
const DATEV_PLANNER_SQL = 'set local random_page_cost = 1.1; set local jit = off';

/** SQL: an invoice's tax rates as one jsonb array, the expression invoices_tax_rates_idx indexes per tenant. */
const TAX_RATES_SQL = "jsonb_path_query_array(i.tax_breakdown, '$[*].taxRate')";

/**
 * Every tax rate in the period must be mapped in the chart (foreign VAT aside). The tenant's
 * distinct rate combinations first, by a skip scan over invoices_tax_rates_idx (a few index
 * probes, whatever the number of invoices); only the invoices of a combination with a rate the
 * chart lacks are read, where the check used to scan every invoice of the period.
 */
export async function assertDatevRatesMapped(db: Knex, tenant: ReportTenant, period: TaxPeriod): Promise<void> {
  const chart = datevChartOf(tenant);
  const allowed = DATEV_CHARTS[chart].rates;
  const { rows: combinations } = await db.raw(
    `with recursive r(rates) as (
       (select ${TAX_RATES_SQL} from invoices i where i.tenant_id = ? order by 1 limit 1)
       union all
       select (select ${TAX_RATES_SQL} from invoices i where i.tenant_id = ? and ${TAX_RATES_SQL} > r.rates order by 1 limit 1)
         from r where r.rates is not null)
     select rates::text as "rates" from r where rates is not null`,
    [tenant.id, tenant.id],
  );
  // Any invoice of the tenant (any type, status, date): a superset of the period's; a combination
  // whose rates are all mapped needs no look at its invoices. One with a rate that is not a rate
  // at all is read like an unmapped one, so the period's check answers as it did.
  const mapped = (rate: unknown) => {
    try {
      return allowed.includes(normalizeRate(String(rate)));
    } catch {
      return false;
    }
  };
  const suspect = (combinations as Array<{ rates: string }>).map((c) => c.rates).filter((rates) => !(JSON.parse(rates) as unknown[]).every(mapped));
  if (!suspect.length) return;
  const where = `i.tenant_id = ? and ${TAX_RATES_SQL} = any(?::jsonb[]) and ${inBooksSql('i')} and (
            (i.type in ('rechnung', 'gutschrift') and i.status = any(?::text[]) and i.issue_date between ? and ?)
         or (i.type = 'eingangsrechnung' and i.status <> all(?::text[]) and i.invoice_date between ? and ?))`;
  const bindings = [tenant.id, suspect, [...FINALIZED_STATUSES], period.start, period.end, [...INPUT_TAX_EXCLUDED_STATUSES], period.start, period.end];
  // The period's rates of those invoices; only a rate the chart lacks is checked for foreign VAT
  // lines, which are booked without a key and need no account of their rate.
  const { rows: rates } = await db.raw(
    `select distinct tb->>'taxRate' as "rate" from invoices i cross join lateral jsonb_array_elements(i.tax_breakdown) tb where ${where}`,
    bindings,
  );
  const unmapped = (rates as Array<{ rate: string }>).map((r) => String(r.rate)).filter((r) => !allowed.includes(normalizeRate(r)));
  if (!unmapped.length) return;
  const { rows } = await db.raw(
    `select distinct tb->>'taxRate' as "rate"
       from invoices i cross join lateral jsonb_array_elements(i.tax_breakdown) tb
      where ${where} and tb->>'taxRate' = any(?::text[])
        -- Foreign VAT (any rate) is booked at its gross without a key: it needs no account of its rate.
        and not exists (select 1 from invoice_items fv
                         where fv.invoice_id = i.id and fv.tax_category = 'foreignVat' and fv.tax_rate = (tb->>'taxRate')::numeric)`,
    [...bindings, unmapped],
  );
  const bad = (rows as Array<{ rate: string }>).map((r) => normalizeRate(String(r.rate))).filter((r) => !allowed.includes(r));
  if (bad.length) {
    throw taxReportError(
      'UNSUPPORTED_TAX_RATE',
      `Tax rate(s) ${[...new Set(bad)].join(', ')} % cannot be booked in ${chart} (rates: ${allowed.join(', ')}); set settings.datev.chart`,
      [{ field: 'chart', message: `${chart} has no account for ${bad.join(', ')} %` }],
    );
  }
}

const SOURCE_LABEL: Record<string, string> = {
  journal: 'the general ledger posting',
  connector: "the connector's expenseAccount setting",
  supplier: "the supplier's defaultExpenseAccount",
  default: "the chart's default",
};

/**
 * The expense accounts of the period's incoming invoices (expenseAccount.ts: the ledger's choice)
 * must be Sachkonten of exactly DATEV_ACCOUNT_LENGTH digits without a leading zero. One GROUP BY
 * over the period; 422 ACCOUNT_LENGTH naming each bad account, where it comes from and an example.
 */
export async function assertDatevExpenseAccounts(db: Knex, tenant: ReportTenant, period: TaxPeriod): Promise<void> {
  const x = expenseAccountSql(datevChartOf(tenant));
  const { rows } = await db.raw(
    `select ${x.account} as "account", ${x.source} as "source", count(*)::int as "invoices",
            min(coalesce(i.invoice_number, i.id::text)) as "example", min(s.name) as "supplier"
       from invoices i ${x.joins}
      where i.tenant_id = ? and i.type = 'eingangsrechnung' and i.status <> all(?::text[])
        and ${inBooksSql('i')} and i.invoice_date between ? and ?
      group by 1, 2`,
    [tenant.id, [...INPUT_TAX_EXCLUDED_STATUSES], period.start, period.end],
  );
  const bad = (rows as Array<{ account: string; source: string; invoices: number; example: string; supplier: string | null }>).filter(
    (r) => !ACCOUNT_FITS.test(r.account),
  );
  if (!bad.length) return;
  const describe = (r: (typeof bad)[number]) =>
    `${JSON.stringify(r.account)} from ${SOURCE_LABEL[r.source] ?? r.source}${r.supplier ? ` (${r.supplier})` : ''}, ${r.invoices} invoice(s), e.g. ${r.example}`;
  throw taxReportError(
    'ACCOUNT_LENGTH',
    `The DATEV export writes ${DATEV_ACCOUNT_LENGTH}-digit accounts (Sachkontenlänge ${DATEV_ACCOUNT_LENGTH}), but these expense accounts do not fit: ` +
      `${bad.map(describe).join('; ')}. Use ${DATEV_ACCOUNT_LENGTH}-digit accounts of the chart in the supplier or connector settings`,
    bad.map((r) => ({ field: 'expenseAccount', message: describe(r) })),
    { accounts: bad.map((r) => ({ account: r.account, source: r.source, invoices: r.invoices })) },
  );
}

/**
 * SQL: a payment provider's refund in the books (binding: INPUT_TAX_EXCLUDED_STATUSES). It has no
 * payment record (payments are positive); the document is its own money movement, on its date.
 */
const PROVIDER_REFUND_SQL = `i.type = 'eingangsrechnung' and i.source is not null and i.total_gross < 0
  and i.status <> all(?::text[]) and ${inBooksSql('i')}`;

/**
 * The clearing accounts the money rows of payment providers' documents are booked on
 * (clearingAccountSql: the ledger's) must fit the batch's Sachkontenlänge like the expense
 * accounts: a connector's clearingAccount setting may name any account of the ledger.
 */
export async function assertDatevClearingAccounts(db: Knex, tenant: ReportTenant, period: TaxPeriod): Promise<void> {
  const c = clearingAccountSql(datevChartOf(tenant));
  const { rows } = await db.raw(
    `select m.account, m.source, count(*)::int as "invoices", min(m.number) as "example"
       from (select ${c.account} as "account", ${c.source} as "source", coalesce(i.number, i.invoice_number, i.id::text) as "number"
               from payments p join invoices i on i.id = p.invoice_id ${c.joins}
              where p.tenant_id = ? and p.date between ? and ? and i.source is not null and ${paymentsInBooksSql('i')}
             union all
             select ${c.account}, ${c.source}, coalesce(i.invoice_number, i.id::text)
               from invoices i ${c.joins}
              where i.tenant_id = ? and ${PROVIDER_REFUND_SQL} and i.invoice_date between ? and ?) m
      where m.account is not null
      group by 1, 2`,
    [tenant.id, period.start, period.end, tenant.id, [...INPUT_TAX_EXCLUDED_STATUSES], period.start, period.end],
  );
  const bad = (rows as Array<{ account: string; source: string; invoices: number; example: string }>).filter((r) => !ACCOUNT_FITS.test(r.account));
  if (!bad.length) return;
  const describe = (r: (typeof bad)[number]) =>
    `${JSON.stringify(r.account)} from ${r.source === 'connector' ? "the connector's clearingAccount setting" : (SOURCE_LABEL[r.source] ?? r.source)}, ${r.invoices} payment(s), e.g. ${r.example}`;
  throw taxReportError(
    'ACCOUNT_LENGTH',
    `The DATEV export writes ${DATEV_ACCOUNT_LENGTH}-digit accounts (Sachkontenlänge ${DATEV_ACCOUNT_LENGTH}), but these clearing accounts do not fit: ` +
      `${bad.map(describe).join('; ')}. Use ${DATEV_ACCOUNT_LENGTH}-digit accounts of the chart in the connector settings`,
    bad.map((r) => ({ field: 'clearingAccount', message: describe(r) })),
    { accounts: bad.map((r) => ({ account: r.account, source: r.source, invoices: r.invoices })) },
  );
}

/**
 * The rows of `sql`, FETCH_SIZE at a time, one FETCH ahead. Batches, not rows: every value an
 * async generator yields costs promises and a microtask turn (docs/benchmarks.md, 2026-11-25).
 */
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

const text = (number: string | null, partner: string | null) => (number ? (partner ? `${number} ${partner}` : number) : (partner ?? ''));

// The cursors' rows, as their statements name the columns (amounts as decimal text rounded to the
// cent, so with exactly two decimals; dates YYYY-MM-DD).
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
  /** Of the 0 % rows only (null above 0 %): the legacy inference by the buyer's VAT ID and country. */
  reverseCharge: boolean | null;
  export: boolean | null;
}

/** The sales cursor's row (taxCategory and exemptionReason null): a 0 % row carries its split by category, [category, reason, gross] each. */
type SalesQueryRow = SalesRow & { zeroSplit: Array<[TaxCategory | null, string | null, string]> | null };

/** A 0 % row as one row per category group of its lines; a row without a split (rates above 0, legacy lines) as it is. */
function expandZeroSplit(rows: SalesQueryRow[]): SalesRow[] {
  // Most batches have no split row: the rows themselves (their taxCategory and exemptionReason
  // columns are null), no copy.
  if (!rows.some((r) => r.zeroSplit?.length)) return rows;
  const out: SalesQueryRow[] = [];
  for (const r of rows) {
    if (!r.zeroSplit?.length) out.push(r);
    else for (const [taxCategory, exemptionReason, gross] of r.zeroSplit) out.push({ ...r, zeroSplit: null, gross, taxCategory, exemptionReason });
  }
  return out;
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

/** One FETCH of one of the three cursors, in file order: all sales, then incoming, then money movements. */
type RowBatch = { kind: 'sales'; rows: SalesRow[] } | { kind: 'incoming'; rows: IncomingRow[] } | { kind: 'payments'; rows: MoneyMovementRow[] };

/**
 * A row as the booking source datevPosting maps: with the amount it books (a credit note's
 * negated), or with `unit`, an amount of that sign already (the export's cached postings).
 */
function sourceOf(batch: RowBatch['kind'], r: SalesRow | IncomingRow | MoneyMovementRow, smallBusiness: boolean, unit?: string): DatevBookingSource {
  if (batch === 'sales') {
    const s = r as SalesRow;
    return {
      kind: 'salesInvoice',
      taxRate: s.taxRate,
      gross: unit ?? (s.type === 'gutschrift' ? negate(s.gross) : s.gross),
      taxCategory: s.taxCategory,
      exemptionReason: s.exemptionReason,
      // Legacy lines without a category: the inference the export always made.
      zeroRateKind: s.reverseCharge ? 'reverseChargeEu' : s.export ? 'export' : 'taxFree',
    };
  }
  if (batch === 'incoming') {
    const s = r as IncomingRow;
    return { kind: 'incomingInvoice', taxRate: s.taxRate, gross: unit ?? s.gross, expenseAccount: s.expenseAccount, taxCategory: s.taxCategory, smallBusiness };
  }
  const m = r as MoneyMovementRow;
  // A payment on a credit note is money paid back to the customer: a reversed receipt. A refund
  // document's amount is negative already: money back from the supplier.
  return {
    kind: 'payment',
    of: m.type === 'eingangsrechnung' ? 'incomingInvoice' : 'salesInvoice',
    amount: unit ?? (m.type === 'gutschrift' ? negate(m.amount) : m.amount),
    clearingAccount: m.moneyAccount ?? undefined,
  };
}

const serviceDateOf = (batch: RowBatch['kind'], r: SalesRow | IncomingRow | MoneyMovementRow) => (batch === 'sales' ? (r as SalesRow).serviceDate : null);

/** The booking of a row (null: nothing to book), by datevPosting: the mapping's one definition. */
function bookingOf(chart: DatevChart, batch: RowBatch['kind'], r: SalesRow | IncomingRow | MoneyMovementRow, smallBusiness: boolean): DatevBooking | null {
  const p = datevPosting(chart, sourceOf(batch, r, smallBusiness));
  if (!p) return null;
  // Every field named, one object shape for all rows (spreads made each row's object slow to build and to read).
  return {
    amount: p.amount,
    debitCredit: p.debitCredit,
    account: p.account,
    contraAccount: p.contraAccount,
    buKey: p.buKey,
    currency: 'EUR',
    documentDate: r.date,
    documentField1: r.number ?? undefined,
    text: text(r.number, r.partner),
    serviceDate: serviceDateOf(batch, r) ?? undefined,
  };
}

/**
 * Every booking of the period as objects, lazily, a batch at a time (one per FETCH); with
 * datevCsvStream the reference the export's text path (datevExportChunks) must equal byte for
 * byte (test/api/reports/datevStream.test.ts). Amounts in EUR: a foreign-currency document's at
 * its stored exchange rate (eurSql, per row; its payments at the document's rate too).
 * assertDatevExportable refuses such documents for now.
 */
export async function* datevBookings(tenant: ReportTenant, period: TaxPeriod, knex: Knex = defaultDb()): AsyncGenerator<DatevBooking[]> {
  const chart = datevChartOf(tenant);
  const smallBusiness = tenant.settings?.smallBusiness === true;
  for await (const batch of datevRows(tenant, period, knex)) {
    const bookings: DatevBooking[] = [];
    for (const r of batch.rows) {
      const b = bookingOf(chart, batch.kind, r, smallBusiness);
      if (b) bookings.push(b);
    }
    if (bookings.length) yield bookings;
  }
}

/** A rounded amount as the cursors give it: sign, at most 10 integer digits, two decimals. */
const CENTS_TEXT = /^-?\d{1,10}\.\d\d$/;
/**
 * Lines written as one string and then encoded (a FETCH's lines are many such pieces). A string
 * built line by line is a rope that is flattened to be encoded: 64 lines (~12 KB) flatten in the
 * young generation and die there, where a FETCH's 2,000 (~370 KB) were copied by the scavenges
 * that ran while they were being built and then flattened as a large object (docs/benchmarks.md,
 * "DATEV: checks by index, bytes in pieces").
 */
export const DATEV_LINES_PER_PIECE = 64;
/** Distinct postings an export caches at most (accounts × rates × categories × sign: a few dozen in practice). */
const MAX_CACHED_POSTINGS = 10_000;

/**
 * The booking lines of the period (each with its CRLF) as Windows-1252 bytes, one Buffer per
 * FETCH, encoded DATEV_LINES_PER_PIECE lines at a time; pass to datevCsvTextStream. The same bytes as datevCsvStream over
 * datevBookings, without a booking object, a decimal.js number or a validation per row: a row's
 * posting (S/H, accounts, BU key) depends only on what it books (kind, rate, category, exemption
 * reason, account) and the amount's sign, never on the amount itself, so datevPosting maps each
 * distinct one once and its validated fields are reused; the amount is the cursor's
 * cent-rounded text with a decimal comma. A row the text path cannot take as it is (an amount of
 * another shape, an odd date) goes through datevBookingLine, errors included.
 */
export async function* datevExportChunks(tenant: ReportTenant, period: TaxPeriod, knex: Knex = defaultDb()): AsyncGenerator<Buffer> {
  const chart = datevChartOf(tenant);
  const smallBusiness = tenant.settings?.smallBusiness === true;
  const postings = new Map<string, string>();
  const salesPositive = new Map<string, string>();
  const salesNegative = new Map<string, string>();
  // The row's source with a unit amount of the sign it books (a credit note's flipped by the caller).
  const postingFieldsOf = (kind: RowBatch['kind'], r: SalesRow | IncomingRow | MoneyMovementRow, negative: boolean) => {
    const p = datevPosting(chart, sourceOf(kind, r, smallBusiness, negative ? '-1.00' : '1.00'));
    if (!p) throw new Error('DATEV: no posting for a non-zero amount'); // datevPosting returns null for zero only
    return datevPostingFields({ ...p, currency: 'EUR' });
  };
  for await (const batch of datevRows(tenant, period, knex)) {
    const kind = batch.kind;
    const pieces: Buffer[] = [];
    let chunk = '';
    let lines = 0;
    for (const r of batch.rows) {
      if (lines === DATEV_LINES_PER_PIECE) {
        pieces.push(encodeWindows1252(chunk));
        chunk = '';
        lines = 0;
      }
      const amount = kind === 'payments' ? (r as MoneyMovementRow).amount : (r as SalesRow | IncomingRow).gross;
      const serviceDate = kind === 'sales' ? (r as SalesRow).serviceDate : null;
      if (!CENTS_TEXT.test(amount) || r.date.length !== 10 || (serviceDate !== null && serviceDate.length !== 10)) {
        const b = bookingOf(chart, kind, r, smallBusiness);
        if (b) {
          chunk += datevBookingLine(b) + CRLF;
          lines++;
        }
        continue;
      }
      let negative = amount.charCodeAt(0) === 45; // '-'
      const abs = negative ? amount.slice(1) : amount;
      if (abs === '0.00') continue; // DATEV refuses 0,00; datevPosting books nothing for it either
      let fields: string | undefined;
      let key = '';
      if (kind === 'sales') {
        const s = r as SalesRow;
        if (s.type === 'gutschrift') negative = !negative;
        if (s.reverseCharge === null && s.taxCategory === null) {
          // A row above 0 % (most of a file): told apart by sign and rate alone, no key to build.
          const byRate = negative ? salesNegative : salesPositive;
          fields = byRate.get(s.taxRate);
          if (fields === undefined) {
            fields = postingFieldsOf(kind, r, negative);
            byRate.set(s.taxRate, fields);
          }
        } else {
          key = `s${negative ? '-' : '+'}${s.taxRate}|${s.taxCategory}|${s.exemptionReason}|${s.reverseCharge}|${s.export}`;
        }
      } else if (kind === 'incoming') {
        const s = r as IncomingRow;
        key = `i${negative ? '-' : '+'}${s.taxRate}|${s.taxCategory}|${s.expenseAccount}`;
      } else {
        const m = r as MoneyMovementRow;
        if (m.type === 'gutschrift') negative = !negative;
        key = `p${negative ? '-' : '+'}${m.type === 'eingangsrechnung'}|${m.moneyAccount}`;
      }
      if (fields === undefined) {
        fields = postings.get(key);
        if (fields === undefined) {
          fields = postingFieldsOf(kind, r, negative);
          if (postings.size >= MAX_CACHED_POSTINGS) postings.clear();
          postings.set(key, fields);
        }
      }
      const d = r.date;
      chunk +=
        abs.replace('.', ',') +
        fields +
        datevDocumentFields(
          d.slice(8, 10) + d.slice(5, 7),
          r.number,
          text(r.number, r.partner),
          serviceDate ? serviceDate.slice(8, 10) + serviceDate.slice(5, 7) + serviceDate.slice(0, 4) : '',
        ) +
        CRLF;
      lines++;
    }
    if (chunk) pieces.push(encodeWindows1252(chunk));
    if (pieces.length) yield pieces.length === 1 ? pieces[0] : Buffer.concat(pieces);
  }
}

/** Chunks the export reads ahead while its checks run: at most this many FETCHes held (about 0.4 MB each). */
const READ_AHEAD_CHUNKS = 8;

/**
 * The download: assertDatevExportable, and meanwhile the export's first chunks
 * (datevExportChunks, at most READ_AHEAD_CHUNKS held), so it does not wait for the checks and
 * then for the cursors in turn. Resolves, once the checks passed and the header is valid, to the
 * file's byte stream (datevCsvTextStream); rejects before any byte with the checks' error, the
 * header's, or one the first chunks met, the cursors' transaction rolled back. The checks and
 * the cursors read in snapshots of their own, as they did one after the other.
 */
export async function datevExportStream(tenant: ReportTenant, period: TaxPeriod, knex: Knex = defaultDb(), createdAt = new Date()): Promise<Readable> {
  const source = datevExportChunks(tenant, period, knex);
  const ahead: Buffer[] = [];
  let finished = false;
  let stop = false;
  const readAhead = (async () => {
    while (!stop && ahead.length < READ_AHEAD_CHUNKS) {
      const r = await source.next();
      if (r.done) {
        finished = true;
        return;
      }
      ahead.push(r.value);
    }
  })();
  readAhead.catch(() => undefined); // awaited below, after the checks
  try {
    try {
      await assertDatevExportable(knex, tenant, period);
    } finally {
      stop = true;
      await readAhead.catch(() => undefined);
    }
    await readAhead;
    return datevCsvTextStream(
      datevMeta(tenant, period, createdAt),
      (async function* () {
        while (ahead.length) yield ahead.shift() as Buffer;
        if (!finished) yield* source; // a consumer that stops early returns it: the transaction ends
      })(),
    );
  } catch (err) {
    await source.return(undefined);
    throw err;
  }
}

/**
 * The three cursors' rows, a FETCH at a time, in one read-only repeatable-read transaction (see
 * the top of this file).
 */
async function* datevRows(tenant: ReportTenant, period: TaxPeriod, knex: Knex): AsyncGenerator<RowBatch> {
  const chart = datevChartOf(tenant);
  const trx = await knex.transaction();
  try {
    await trx.raw('set transaction isolation level repeatable read, read only');
    await trx.raw(DATEV_PLANNER_SQL);

    // Hand-written cursors: a year's bookings stream in batches without a row object per model.
    // Amounts rounded to the cent here (half away from zero, as datevPosting rounds).
    const sales = cursor<SalesQueryRow>(
      trx,
      'datev_sales',
      // DATEV's Leistungsdatum is one day: of a service period its last, when the service is complete.
      // The 0 % group is split by the lines' stored category (and exemption reason): a row per
      // invoice, rate and category (expandZeroSplit), rates above 0 are standard and keep the
      // breakdown's tax. The split and the legacy flags are computed for 0 % rows alone: as a
      // lateral join for every row they cost as much as the rest of the statement.
      `select i.type, i.number, i.issue_date as "date", coalesce(i.service_end_date, i.service_date) as "serviceDate",
              coalesce(i.customer_snapshot->>'company', i.customer_snapshot->>'name') as "partner",
              tb.value->>'taxRate' as "taxRate", round(${eurSql("(tb.value->>'net')::numeric + (tb.value->>'tax')::numeric")}, 2)::text as "gross",
              case when (tb.value->>'taxRate')::numeric = 0 then (
                select json_agg(json_build_array(z.category, z.reason, round(${eurSql('z.net')}, 2)::text) order by z.category, z.reason)
                  from (select ii.tax_category as category, ii.exemption_reason as reason, sum(ii.net_amount) as net
                          from invoice_items ii
                         where ii.invoice_id = i.id and ii.tax_rate = 0
                         group by ii.tax_category, ii.exemption_reason) z
              ) end as "zeroSplit", null as "taxCategory", null as "exemptionReason",
              case when (tb.value->>'taxRate')::numeric = 0 then coalesce(${REVERSE_CHARGE_SQL}, false) end as "reverseCharge",
              case when (tb.value->>'taxRate')::numeric = 0 then (${EXPORT_SQL}) end as "export"
         from invoices i cross join lateral jsonb_array_elements(i.tax_breakdown) with ordinality tb(value, n)
        where i.tenant_id = ? and i.type in ('rechnung', 'gutschrift') and i.status = any(?::text[])
          and ${inBooksSql('i')} and i.issue_date between ? and ?
        order by i.issue_date, i.id, tb.n`,
      [EU_VAT_PREFIXES, vatPrefixOf(tenant.country), ...exportBindings(tenant.country), tenant.id, [...FINALIZED_STATUSES], period.start, period.end],
    );
    for await (const rows of sales) yield { kind: 'sales', rows: expandZeroSplit(rows) };

    const x = expenseAccountSql(chart);
    const incoming = cursor<IncomingRow>(
      trx,
      'datev_incoming',
      `select i.invoice_number as "number", i.invoice_date as "date", s.name as "partner",
              ${x.account} as "expenseAccount",
              tb->>'taxRate' as "taxRate", round(${eurSql("coalesce(z.net, (tb->>'net')::numeric + (tb->>'tax')::numeric)")}, 2)::text as "gross",
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
    for await (const rows of incoming) yield { kind: 'incoming', rows };

    // Money movements by date: the payment records (not those of a void, cancelled incoming
    // invoice: books.ts), and a provider's refund, its own money movement without a payment
    // record. A provider's money sits on the ledger's clearing account (clearingAccountSql), hand-
    // entered documents keep the bank (worked example: docs/reports.md, "DATEV Buchungsstapel").
    const c = clearingAccountSql(chart);
    const payments = cursor<MoneyMovementRow>(
      trx,
      'datev_payments',
      `select m.amount, m.date, m.type, m.number, m.partner, m."moneyAccount"
         from (select p.id, round(${eurSql('p.amount')}, 2)::text as "amount", p.date as "date", i.type,
                      coalesce(i.number, i.invoice_number) as "number",
                      coalesce(i.customer_snapshot->>'company', i.customer_snapshot->>'name', s.name) as "partner",
                      ${c.account} as "moneyAccount"
                 from payments p
                 join invoices i on i.id = p.invoice_id
                 left join suppliers s on s.id = i.supplier_id ${c.joins}
                where p.tenant_id = ? and p.date between ? and ? and ${paymentsInBooksSql('i')}
               union all
               select i.id, round(${eurSql('i.total_gross')}, 2)::text, i.invoice_date, i.type, i.invoice_number, s.name, ${c.account}
                 from invoices i
                 left join suppliers s on s.id = i.supplier_id ${c.joins}
                where i.tenant_id = ? and ${PROVIDER_REFUND_SQL} and i.invoice_date between ? and ?) m
        order by m.date, m.id`,
      [tenant.id, period.start, period.end, tenant.id, [...INPUT_TAX_EXCLUDED_STATUSES], period.start, period.end],
    );
    for await (const rows of payments) yield { kind: 'payments', rows };
  } finally {
    await trx.rollback().catch(() => undefined);
  }
}

const negate = (v: string) => (v.startsWith('-') ? v.slice(1) : `-${v}`);
