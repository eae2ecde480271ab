/**
 * EN 16931 rules on the document totals (BG-22): presence, and that they reconcile with the lines,
 * the document level allowances/charges and the VAT breakdown. Order in the tables is the order of
 * the findings.
 */
import Decimal from 'decimal.js';
import type { InvoiceCtx, Rule, TotalsCtx } from './context';
import { totalVatDecimals, totalsDecimalRules } from './decimals';
import { num, round2, sum } from './values';
import { attr, blank, kids, one, text, textAt } from './xmlNodes';

type TotalsRule = Rule<{ inv: InvoiceCtx; totals: TotalsCtx }>;

/** BR-12..15: a missing summation element counts as all four amounts missing. */
function requiredTotal(id: string, field: keyof TotalsCtx, message: string): TotalsRule {
  return { id, check: ({ totals }) => (!totals.node || totals[field] === undefined ? message : undefined) };
}

/** Run for every invoice, with or without a SpecifiedTradeSettlementHeaderMonetarySummation. */
export const totalsPresenceRules: ReadonlyArray<TotalsRule> = [
  requiredTotal('BR-12', 'lineTotalText', 'An Invoice shall have the Sum of Invoice line net amount (BT-106).'),
  requiredTotal('BR-13', 'basisText', 'An Invoice shall have the Invoice total amount without VAT (BT-109).'),
  requiredTotal('BR-14', 'grandText', 'An Invoice shall have the Invoice total amount with VAT (BT-112).'),
  requiredTotal('BR-15', 'dueText', 'An Invoice shall have the Amount due for payment (BT-115).'),
];

/** Sum of the document level allowances (false) or charges (true). */
function headerSum(inv: InvoiceCtx, isCharge: boolean): Decimal {
  const indicator = (n: (typeof inv.headerAllowanceCharges)[number]) => textAt(n, 'ChargeIndicator/Indicator')?.trim();
  return round2(
    sum(inv.headerAllowanceCharges.filter((n) => (indicator(n) === 'true') === isCharge).map((n) => num(textAt(n, 'ActualAmount')) ?? new Decimal(0))),
  );
}

const AMOUNT_ELEMENTS = [
  'LineTotalAmount',
  'TaxBasisTotalAmount',
  'GrandTotalAmount',
  'DuePayableAmount',
  'AllowanceTotalAmount',
  'ChargeTotalAmount',
  'TotalPrepaidAmount',
  'RoundingAmount',
] as const;

/** Run only when the summation element is present. */
export const totalsRules: ReadonlyArray<TotalsRule> = [
  {
    id: 'X-NUMBER',
    check: ({ totals }) =>
      AMOUNT_ELEMENTS.filter((name) => totals.t(name) !== undefined && !num(totals.t(name))).map((name) => `${name} "${totals.t(name)}" is not a decimal.`),
  },
  {
    id: 'BR-CO-10',
    check({ inv, totals: s }) {
      if (!s.lineTotal) return;
      const lineSum = round2(sum(inv.lines.filter((l) => l.net).map((l) => l.net!)));
      if (!s.lineTotal.equals(lineSum)) {
        return `Sum of Invoice line net amount (BT-106) ${s.lineTotalText} ≠ Σ Invoice line net amount (BT-131) = ${lineSum.toFixed(2)}.`;
      }
    },
  },
  {
    id: 'BR-CO-11',
    check: ({ inv, totals: s }) =>
      s.allowanceText !== undefined && !s.allowance.equals(headerSum(inv, false))
        ? `Sum of allowances on document level (BT-107) ${s.allowanceText} ≠ Σ Document level allowance amount (BT-92).`
        : undefined,
  },
  {
    id: 'BR-CO-12',
    check: ({ inv, totals: s }) =>
      s.chargeText !== undefined && !s.charge.equals(headerSum(inv, true))
        ? `Sum of charges on document level (BT-108) ${s.chargeText} ≠ Σ Document level charge amount (BT-99).`
        : undefined,
  },
  {
    id: 'BR-CO-13',
    check: ({ totals: s }) =>
      s.lineTotal && s.basisTotal && !s.basisTotal.equals(round2(s.lineTotal.minus(s.allowance).plus(s.charge)))
        ? `Invoice total amount without VAT (BT-109) ${s.basisText} ≠ line total ${s.lineTotalText} - allowances + charges.`
        : undefined,
  },
  {
    // Stricter than the Schematron (docs/e-invoicing.md): exactly one BT-110 in the invoice currency.
    id: 'BR-CO-15',
    check: ({ inv, totals: s }) =>
      s.taxInCurrency.length !== 1
        ? `The Invoice total VAT amount (BT-110) shall be given exactly once with currencyID = invoice currency ${inv.currency ?? '?'} (found ${s.taxInCurrency.length}).`
        : undefined,
  },
  {
    id: 'BR-CO-14',
    check({ inv, totals: s }) {
      if (!s.taxInCurrency[0]) return;
      const calcSum = round2(sum(inv.breakdown.map((b) => num(textAt(b, 'CalculatedAmount')) ?? new Decimal(0))));
      if (!s.taxTotal?.equals(calcSum)) {
        return `Invoice total VAT amount (BT-110) ${s.taxTotalText} ≠ Σ VAT category tax amount (BT-117) = ${calcSum.toFixed(2)}.`;
      }
    },
  },
  totalVatDecimals,
  {
    // BT-6 given: BT-111 in that currency, and BT-6 differs from the invoice currency.
    id: 'BR-53',
    check({ inv, totals: s }) {
      const taxCurrency = textAt(inv.settlement, 'TaxCurrencyCode')?.trim();
      if (!taxCurrency) return;
      const inTaxCurrency = kids(s.node, 'TaxTotalAmount').filter((n) => attr(n, 'currencyID')?.trim() === taxCurrency);
      if (inTaxCurrency.length === 0 || taxCurrency === inv.currency) {
        return `If the VAT accounting currency code (BT-6) ${taxCurrency} is present, the Invoice total VAT amount in accounting currency (BT-111) shall be provided, and BT-6 shall differ from the invoice currency.`;
      }
    },
  },
  {
    id: 'BR-DEC-15',
    check({ inv, totals: s }) {
      const taxCurrency = textAt(inv.settlement, 'TaxCurrencyCode')?.trim();
      if (!taxCurrency) return;
      const bad = kids(s.node, 'TaxTotalAmount').filter((n) => attr(n, 'currencyID')?.trim() === taxCurrency && (text(n) ?? '').split('.')[1]?.length > 2);
      if (bad.length > 0) return 'The Invoice total VAT amount in accounting currency (BT-111) shall have at most 2 decimals.';
    },
  },
  {
    id: 'BR-CO-15',
    check: ({ totals: s }) =>
      s.grand && s.basisTotal && s.taxTotal && !s.grand.equals(round2(s.basisTotal.plus(s.taxTotal)))
        ? `Invoice total amount with VAT (BT-112) ${s.grandText} ≠ total without VAT ${s.basisText} + total VAT ${s.taxTotalText}.`
        : undefined,
  },
  {
    id: 'BR-CO-16',
    check: ({ totals: s }) =>
      s.due && s.grand && !s.due.equals(s.grand.minus(s.prepaid).plus(s.rounding))
        ? `Amount due for payment (BT-115) ${s.dueText} ≠ total with VAT ${s.grandText} - paid amount ${s.prepaid.toFixed(2)} + rounding ${s.rounding.toFixed(2)}.`
        : undefined,
  },
  {
    id: 'BR-CO-25',
    check({ inv, totals: s }) {
      if (!s.due?.greaterThan(0)) return;
      const terms = one(inv.settlement, 'SpecifiedTradePaymentTerms');
      if (!one(terms, 'DueDateDateTime') && blank(textAt(terms, 'Description'))) {
        return 'In case the Amount due for payment (BT-115) is positive, either the Payment due date (BT-9) or the Payment terms (BT-20) shall be present.';
      }
    },
  },
  {
    id: 'X-BREAKDOWN-SUM',
    check({ inv, totals: s }) {
      const bases = inv.groups.map((g) => g.basis).filter((b): b is Decimal => b !== null);
      if (s.basisTotal && bases.length > 0 && !sum(bases).equals(s.basisTotal)) {
        return `Σ VAT category taxable amounts (BT-116) ${sum(bases).toFixed(2)} ≠ Invoice total amount without VAT (BT-109) ${s.basisText}.`;
      }
    },
  },
  ...totalsDecimalRules,
];
