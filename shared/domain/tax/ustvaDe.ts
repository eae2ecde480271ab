import { D, type Dec, dec, money, sumByRate, taxOn } from './amounts';
import { taxReportError } from './errors';
import type { VatAggregates } from './u30';

/**
 * German Umsatzsteuer-Voranmeldung (UStVA) Kennzahlen from period aggregates. Bases are whole
 * euros, cents truncated (USt 1 A "volle EUR"); the Kz 81/86 tax is computed from them, half-up,
 * as ELSTER recomputes it, so exactOutputTax is informational. Kz 66/83 carry cents. Kz 48 and
 * the § 13b recipient Kennzahlen are not produced (docs/tax-reports.md, "German UStVA").
 */
export const USTVA_KENNZAHLEN = ['21', '41', '43', '66', '81', '83', '86'] as const;
export type UstvaKennzahl = (typeof USTVA_KENNZAHLEN)[number];
export type UstvaKennzahlen = Record<UstvaKennzahl, string>;

export interface UstvaResult {
  /** Bases as whole-euro strings ("1234", "-56"); 66 and 83 with two places ("12.34"). */
  kennzahlen: UstvaKennzahlen;
  /** Tax on Kz 81 and Kz 86 as the form computes it (from the whole-euro bases). */
  taxKz81: string;
  taxKz86: string;
  /** Σ tax per rate on the exact (cent) bases: what the invoices say; differs by cents at most. */
  exactOutputTax: string;
  salesByRate: Array<{ taxRate: string; net: string; tax: string }>;
  inputTax: string;
  /** = Kz 83. */
  payable: string;
  unclassifiedZeroRatedNet: string;
}

const DE_RATES_DESC = ['19', '7', '0'];

/** Whole euros, cents dropped toward zero: 1234.99 -> 1234, -12.50 -> -12. */
export function wholeEuros(value: Dec): Dec {
  return value.toDecimalPlaces(0, D.ROUND_DOWN);
}

const euros = (value: Dec): string => {
  const s = wholeEuros(value).toFixed(0);
  return s === '-0' ? '0' : s;
};

export function computeUstvaDe(agg: VatAggregates): UstvaResult {
  const byRate = sumByRate(agg.salesByRate);
  for (const rate of byRate.keys()) {
    if (!DE_RATES_DESC.includes(rate)) {
      throw taxReportError('UNSUPPORTED_TAX_RATE', `Tax rate ${rate} % has no UStVA Kennzahl here (German rates: 19, 7, 0)`, [
        { field: 'salesByRate', message: `unsupported rate ${rate}` },
      ]);
    }
  }
  const zero = new D(0);
  const net = (rate: string): Dec => byRate.get(rate) ?? zero;

  const base81 = wholeEuros(net('19'));
  const base86 = wholeEuros(net('7'));
  const tax81 = taxOn(base81, '19');
  const tax86 = taxOn(base86, '7');
  const inputTax = dec(agg.inputTax, 'inputTax');
  const payable = tax81.plus(tax86).minus(inputTax);

  const rows = DE_RATES_DESC.map((rate) => {
    const n = net(rate);
    return { taxRate: rate, net: n, tax: rate === '0' ? zero : taxOn(n, rate) };
  });
  const exactOutputTax = rows.reduce((s, r) => s.plus(r.tax), zero);

  const rc = dec(agg.reverseChargeEuNet, 'reverseChargeEuNet');
  const icSupply = agg.intraCommunitySupplyNet !== undefined ? dec(agg.intraCommunitySupplyNet, 'intraCommunitySupplyNet') : zero;
  const exports = agg.exportNet !== undefined ? dec(agg.exportNet, 'exportNet') : zero;
  const unclassified = net('0').minus(rc).minus(icSupply).minus(exports);

  return {
    kennzahlen: {
      '21': euros(rc),
      '41': euros(icSupply),
      '43': euros(exports),
      '66': money(inputTax),
      '81': euros(base81),
      '83': money(payable),
      '86': euros(base86),
    },
    taxKz81: money(tax81),
    taxKz86: money(tax86),
    exactOutputTax: money(exactOutputTax),
    salesByRate: rows.map((r) => ({ taxRate: r.taxRate, net: money(r.net), tax: money(r.tax) })),
    inputTax: money(inputTax),
    payable: money(payable),
    unclassifiedZeroRatedNet: money(unclassified),
  };
}
