import { D, dec, normalizeRate } from './amounts';
import { taxReportError } from './errors';
// Pure data (no I/O): the ledger's seeded charts, so the default expense account is defined once.
import { CHARTS } from '../charts';
import type { TaxCategory } from './vatCategory';

/**
 * Which accounts and BU-Schlüssel (tax key) a DATEV booking row gets. Pure table lookups; the
 * conventions (Konto/Gegenkonto, S/H, collective accounts "ohne Kontokorrent", no key on DATEV's
 * automatic revenue accounts) and their sources: docs/tax-reports.md, "Account mapping
 * (`datevPosting`)". EKR and SKR03 take the default expense account from the ledger's charts.
 */
export type DatevChart = 'SKR03' | 'SKR04' | 'EKR';

/** What a 0 % sales row is; decides the revenue account (and its UStVA / U30 line). */
export type ZeroRateKind = 'reverseChargeEu' | 'intraCommunitySupply' | 'export' | 'thirdCountryService' | 'taxFree';

/** Which 0 % kind a stored line category books as; exempt lines are refined by their reason (exemptRevenue). */
const CATEGORY_ZERO_KIND: Record<Exclude<TaxCategory, 'standard' | 'zeroRated' | 'exempt' | 'foreignVat'>, ZeroRateKind> = {
  reverseCharge: 'reverseChargeEu',
  intraCommunitySupply: 'intraCommunitySupply',
  export: 'export',
  notSubject: 'thirdCountryService',
};

export type DatevBookingSource =
  | {
      kind: 'salesInvoice';
      /** One row per invoice and tax rate. */
      taxRate: string;
      /** Gross of that rate; negative for a credit note. */
      gross: string;
      /**
       * The lines' stored VAT category (docs/vat-categories.md); decides the account of a 0 % row.
       * Null or absent (legacy lines nothing classified): zeroRateKind decides, as inferred.
       */
      taxCategory?: TaxCategory | null;
      /** With taxCategory exempt: the exemption reason code (small business, rent, …). */
      exemptionReason?: string | null;
      /** For a 0 % row without taxCategory: which kind of 0 % turnover; defaults to 'taxFree'. */
      zeroRateKind?: ZeroRateKind;
      /** Personal debtor account (e.g. 10000); default: receivables without Kontokorrent. */
      debtorAccount?: string;
      revenueAccount?: string;
    }
  | {
      kind: 'incomingInvoice';
      taxRate: string;
      /** Gross of that rate; negative for a refund / credit. */
      gross: string;
      /** Personal creditor account (e.g. 70000); default: payables without Kontokorrent. */
      creditorAccount?: string;
      /** Expense account from the connector settings; default: the chart's "other expenses". */
      expenseAccount?: string;
      /**
       * The purchase's VAT category: reverseCharge = a service from a business in another member
       * state (DE § 13b Abs. 1 UStG), intraCommunitySupply = an intra-Community acquisition of goods
       * (DE § 1a UStG). Both are 0 % rows whose tax the buyer owes and deducts: the BU key books both.
       * foreignVat = another country's VAT (any rate): not deductible here, the gross is the expense,
       * booked without a key (docs/vat-categories.md, "Foreign VAT").
       */
      taxCategory?: TaxCategory | null;
      /**
       * A small-business tenant deducts no input tax (docs/vat-categories.md): no input-tax key
       * (9 / 8 …) and, for a reverse-charge purchase or ig. Erwerb, no 94 / 19 either (they would
       * deduct the tax they book as owed); the advisor books the tax owed.
       */
      smallBusiness?: boolean;
    }
  | {
      kind: 'payment';
      /** A payment received on a sales invoice, or paid on an incoming invoice. */
      of: 'salesInvoice' | 'incomingInvoice';
      /** Positive amount; negative for a reversal. */
      amount: string;
      /** Debtor / creditor account the invoice was booked on; default as for invoices. */
      personalAccount?: string;
      bankAccount?: string;
      /**
       * A payment provider's document (webhook payment or refund): the account the general ledger
       * books its money on (the provider's clearing account, docs/ledger.md), instead of the bank.
       */
      clearingAccount?: string;
    };

export interface DatevPosting {
  /** Positive, two places ("119.00"). */
  amount: string;
  debitCredit: 'S' | 'H';
  account: string;
  contraAccount: string;
  buKey?: string;
}

interface ChartTable {
  rates: string[];
  receivables: string;
  payables: string;
  bank: string;
  revenue: Record<string, string>;
  revenueKey: Record<string, string | undefined>;
  zeroRevenue: Record<ZeroRateKind, string>;
  /** A real 0 % rate (DE § 12 Abs. 3 UStG). */
  zeroRatedRevenue: string;
  /** Exempt turnover by exemption reason code; others: zeroRevenue.taxFree. */
  exemptRevenue: Record<string, string>;
  expense: string;
  inputTaxKey: Record<string, string | undefined>;
  /** Purchases the buyer owes the tax on (0 % rows): key booking output and input tax at once. */
  purchaseKey: { reverseCharge?: string; intraCommunityAcquisition?: string };
}

export const DATEV_CHARTS: Record<DatevChart, ChartTable> = {
  SKR03: {
    rates: ['19', '7', '0'],
    receivables: '1410',
    payables: '1610',
    bank: '1200',
    revenue: { '19': '8400', '7': '8300' },
    revenueKey: {},
    zeroRevenue: { reverseChargeEu: '8336', intraCommunitySupply: '8125', export: '8120', thirdCountryService: '8338', taxFree: '8100' },
    zeroRatedRevenue: '8290',
    exemptRevenue: { 'DE-19': '8195', 'AT-6-1-27': '8195', 'DE-4-12': '8105', 'AT-6-1-16': '8105' },
    expense: CHARTS.SKR03.defaultExpense,
    inputTaxKey: { '19': '9', '7': '8' },
    purchaseKey: { reverseCharge: '94', intraCommunityAcquisition: '19' },
  },
  SKR04: {
    rates: ['19', '7', '0'],
    receivables: '1210',
    payables: '3310',
    bank: '1800',
    revenue: { '19': '4400', '7': '4300' },
    revenueKey: {},
    zeroRevenue: { reverseChargeEu: '4336', intraCommunitySupply: '4125', export: '4120', thirdCountryService: '4338', taxFree: '4100' },
    zeroRatedRevenue: '4290',
    exemptRevenue: { 'DE-19': '4185', 'AT-6-1-27': '4185', 'DE-4-12': '4105', 'AT-6-1-16': '4105' },
    expense: '6300',
    inputTaxKey: { '19': '9', '7': '8' },
    purchaseKey: { reverseCharge: '94', intraCommunityAcquisition: '19' },
  },
  EKR: {
    rates: ['20', '13', '10', '0'],
    receivables: '2000',
    payables: '3300',
    bank: '2800',
    revenue: { '20': '4000', '13': '4013', '10': '4010' },
    revenueKey: { '20': '3', '13': '4', '10': '2' },
    zeroRevenue: { reverseChargeEu: '4120', intraCommunitySupply: '4100', export: '4110', thirdCountryService: '4130', taxFree: '4190' },
    // Austria has no 0 % rate in force (docs/vat-categories.md); a stray zeroRated line books as tax-free.
    zeroRatedRevenue: '4190',
    exemptRevenue: {},
    expense: CHARTS.EKR.defaultExpense,
    inputTaxKey: { '20': '9', '13': '6', '10': '8' },
    // No verified SKR07 key for Austrian reverse charge / ig. Erwerb: booked without a key, the
    // advisor adds the tax (docs/tax-reports.md, DATEV).
    purchaseKey: {},
  },
};

const ACCOUNT_RE = /^[1-9]\d{0,8}$/;

function account(value: string | undefined, fallback: string, field: string): string {
  const v = value ?? fallback;
  if (!ACCOUNT_RE.test(v)) {
    throw taxReportError('INVALID_BOOKING', `${field} must be a DATEV account number (digits, no leading zero)`, [
      { field, message: `invalid account ${JSON.stringify(v)}` },
    ]);
  }
  return v;
}

function rateOf(table: ChartTable, chart: DatevChart, rate: string): string {
  const r = normalizeRate(rate);
  if (!table.rates.includes(r)) {
    throw taxReportError('UNSUPPORTED_TAX_RATE', `Tax rate ${r} % is not mapped for ${chart} (rates: ${table.rates.join(', ')})`, [
      { field: 'taxRate', message: `unsupported rate ${r}` },
    ]);
  }
  return r;
}

/**
 * The posting for one source row, or null when the amount is zero (DATEV refuses 0,00 rows, and
 * there is nothing to book).
 */
export function datevPosting(chart: DatevChart, source: DatevBookingSource): DatevPosting | null {
  const table = DATEV_CHARTS[chart];
  if (!table) throw taxReportError('INVALID_BOOKING', `Unknown chart of accounts ${String(chart)}`);

  switch (source.kind) {
    case 'salesInvoice': {
      const rate = rateOf(table, chart, source.taxRate);
      const a = signed(source.gross, 'gross');
      if (a.zero) return null;
      const fallback = rate === '0' ? zeroRevenueAccount(table, source) : table.revenue[rate];
      const revenue = account(source.revenueAccount, fallback, 'revenueAccount');
      // A caller-chosen revenue account is assumed not to be automatic, so it gets the key too.
      const buKey = rate === '0' ? undefined : (table.revenueKey[rate] ?? (source.revenueAccount ? salesKeyFor(chart, rate) : undefined));
      return {
        amount: a.amount,
        debitCredit: side('S', a.negative),
        account: account(source.debtorAccount, table.receivables, 'debtorAccount'),
        contraAccount: revenue,
        ...(buKey ? { buKey } : {}),
      };
    }
    case 'incomingInvoice': {
      const a = signed(source.gross, 'gross');
      if (a.zero) return null;
      if (source.taxCategory === 'foreignVat') {
        // Not our country's rate, and not deductible in our return: the gross is the cost, no BU key.
        return {
          amount: a.amount,
          debitCredit: side('H', a.negative),
          account: account(source.creditorAccount, table.payables, 'creditorAccount'),
          contraAccount: account(source.expenseAccount, table.expense, 'expenseAccount'),
        };
      }
      const rate = rateOf(table, chart, source.taxRate);
      // A small business deducts no input tax: the gross is its cost, booked without a key.
      const buKey = source.smallBusiness ? undefined : rate === '0' ? purchaseKeyOf(table, source.taxCategory) : table.inputTaxKey[rate];
      return {
        amount: a.amount,
        debitCredit: side('H', a.negative),
        account: account(source.creditorAccount, table.payables, 'creditorAccount'),
        contraAccount: account(source.expenseAccount, table.expense, 'expenseAccount'),
        ...(buKey ? { buKey } : {}),
      };
    }
    case 'payment': {
      const a = signed(source.amount, 'amount');
      if (a.zero) return null;
      const personal =
        source.of === 'salesInvoice'
          ? account(source.personalAccount, table.receivables, 'personalAccount')
          : account(source.personalAccount, table.payables, 'personalAccount');
      return {
        amount: a.amount,
        // Money in: bank in Soll; money out: bank in Haben.
        debitCredit: side(source.of === 'salesInvoice' ? 'S' : 'H', a.negative),
        account:
          source.clearingAccount !== undefined
            ? account(source.clearingAccount, table.bank, 'clearingAccount')
            : account(source.bankAccount, table.bank, 'bankAccount'),
        contraAccount: personal,
      };
    }
  }
}

/** The revenue account of a 0 % sales row: by its stored category, else (legacy) by the inferred kind. */
function zeroRevenueAccount(
  table: ChartTable,
  source: { taxCategory?: TaxCategory | null; exemptionReason?: string | null; zeroRateKind?: ZeroRateKind },
): string {
  switch (source.taxCategory) {
    case null:
    case undefined:
    case 'standard': // a 0 % row is never standard; the check refuses it, so only legacy data lands here
    case 'foreignVat': // purchase-only, never on a sales row
      return table.zeroRevenue[source.zeroRateKind ?? 'taxFree'];
    case 'zeroRated':
      return table.zeroRatedRevenue;
    case 'exempt':
      return (source.exemptionReason && table.exemptRevenue[source.exemptionReason]) || table.zeroRevenue.taxFree;
    default:
      return table.zeroRevenue[CATEGORY_ZERO_KIND[source.taxCategory]];
  }
}

function purchaseKeyOf(table: ChartTable, category: TaxCategory | null | undefined): string | undefined {
  if (category === 'reverseCharge') return table.purchaseKey.reverseCharge;
  if (category === 'intraCommunitySupply') return table.purchaseKey.intraCommunityAcquisition;
  return undefined;
}

// Module level, not per call: the DATEV export calls datevPosting once per row.
function signed(value: string, field: string): { zero: boolean; negative: boolean; amount: string } {
  const d = dec(value, field).toDecimalPlaces(2, D.ROUND_HALF_UP);
  return { zero: d.isZero(), negative: d.isNegative(), amount: d.abs().toFixed(2) };
}

/** S on "Konto" for the normal direction, H for the reversal. */
const side = (normal: 'S' | 'H', negative: boolean): 'S' | 'H' => (negative ? (normal === 'S' ? 'H' : 'S') : normal);

/** Output-tax key for a non-automatic revenue account: DE 3 (19 %) / 2 (7 %); AT as EKR table. */
function salesKeyFor(chart: DatevChart, rate: string): string | undefined {
  if (chart === 'EKR') return DATEV_CHARTS.EKR.revenueKey[rate];
  return rate === '19' ? '3' : rate === '7' ? '2' : undefined;
}

/** DATEV "Sachkontenrahmen" header field: "03" / "04"; empty for EKR (not a DATEV SKR). */
export function datevSkrCode(chart: DatevChart): string {
  return chart === 'SKR03' ? '03' : chart === 'SKR04' ? '04' : '';
}
