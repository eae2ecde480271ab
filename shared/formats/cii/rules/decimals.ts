/**
 * BR-DEC: amounts have at most 2 decimals. Each rule sits in the table of the element it checks
 * (lines.ts, vatBreakdown.ts, totals.ts), at the place where its finding has always come out.
 */
import type { GroupCtx, InvoiceCtx, LineCtx, Rule, TotalsCtx } from './context';
import { decimals } from './values';

type TotalsRule = Rule<{ inv: InvoiceCtx; totals: TotalsCtx }>;

export const lineNetDecimals: Rule<{ inv: InvoiceCtx; line: LineCtx }> = {
  id: 'BR-DEC-23',
  check: ({ line }) =>
    line.netText !== undefined && line.net && decimals(line.netText) > 2
      ? `The Invoice line net amount (BT-131) has more than 2 decimals (${line.where}).`
      : undefined,
};

export const vatBasisDecimals: Rule<{ inv: InvoiceCtx; group: GroupCtx }> = {
  id: 'BR-DEC-19',
  check: ({ group }) => (decimals(group.basisText) > 2 ? `The VAT category taxable amount (BT-116) has more than 2 decimals (${group.where}).` : undefined),
};

export const vatTaxDecimals: Rule<{ inv: InvoiceCtx; group: GroupCtx }> = {
  id: 'BR-DEC-20',
  check: ({ group }) => (decimals(group.calcText) > 2 ? `The VAT category tax amount (BT-117) has more than 2 decimals (${group.where}).` : undefined),
};

/** Only for the TaxTotalAmount in the invoice currency. */
export const totalVatDecimals: TotalsRule = {
  id: 'BR-DEC-13',
  check: ({ totals }) =>
    totals.taxInCurrency[0] && decimals(totals.taxTotalText) > 2 ? 'The Invoice total VAT amount (BT-110) has more than 2 decimals.' : undefined,
};

function totalDecimals(id: string, name: string): TotalsRule {
  return { id, check: ({ totals }) => (decimals(totals.t(name)) > 2 ? `The allowed maximum number of decimals for ${name} is 2.` : undefined) };
}

/** The document totals (BG-22) except BT-110, last in the totals table. */
export const totalsDecimalRules: ReadonlyArray<TotalsRule> = [
  totalDecimals('BR-DEC-09', 'LineTotalAmount'),
  totalDecimals('BR-DEC-10', 'AllowanceTotalAmount'),
  totalDecimals('BR-DEC-11', 'ChargeTotalAmount'),
  totalDecimals('BR-DEC-12', 'TaxBasisTotalAmount'),
  totalDecimals('BR-DEC-14', 'GrandTotalAmount'),
  totalDecimals('BR-DEC-16', 'TotalPrepaidAmount'),
  totalDecimals('BR-DEC-17', 'RoundingAmount'),
  totalDecimals('BR-DEC-18', 'DuePayableAmount'),
];
