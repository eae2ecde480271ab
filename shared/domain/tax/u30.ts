import { D, type Dec, dec, money, sumByRate, taxOn } from './amounts';
import { taxReportError } from './errors';

/**
 * Aggregates the report queries deliver for one period (decimal strings, 2 places; fields in
 * docs/tax-reports.md, "Input: period aggregates"). 0 % turnover not covered by the reverse-charge,
 * intra-Community or export parts is unclassifiedZeroRatedNet: the JSON report shows it, the XML
 * writers refuse it, as the authority's plausibility check would reject the return.
 */
export interface VatAggregates {
  salesByRate: ReadonlyArray<{ taxRate: string; net: string }>;
  reverseChargeEuNet: string;
  inputTax: string;
  intraCommunitySupplyNet?: string;
  exportNet?: string;
}

export const U30_KENNZAHLEN = ['000', '011', '017', '021', '022', '029', '006', '060', '095'] as const;
export type U30Kennzahl = (typeof U30_KENNZAHLEN)[number];
export type U30Kennzahlen = Record<U30Kennzahl, string>;

export interface U30Result {
  /** Every Kennzahl as a 2-place decimal string; "0.00" where nothing applies. */
  kennzahlen: U30Kennzahlen;
  /** One row per Austrian rate (20, 13, 10, 0), tax half-up on the summed net of the rate. */
  salesByRate: Array<{ taxRate: string; net: string; tax: string }>;
  outputTax: string;
  inputTax: string;
  /** KZ 095: output tax − input tax; negative is a credit (Gutschrift). */
  payable: string;
  /** 0 % turnover not assigned to KZ 021/011/017 (see VatAggregates). */
  unclassifiedZeroRatedNet: string;
}

/** Austrian rates and their U30 base Kennzahl (UStG 1994 § 10: 20 %, 10 %, 13 %). */
const AT_RATE_KZ: Record<string, U30Kennzahl | null> = { '20': '022', '13': '006', '10': '029', '0': null };
const AT_RATES_DESC = ['20', '13', '10', '0'];

/**
 * U30 Kennzahlen from period aggregates. Pure. KZ 000 includes the 0 % bases (021/011/017), so
 * FinanzOnline's "000 − 021 − steuerfrei = Σ versteuert" check holds. Tax per rate is computed
 * once on the rate's summed net, half-up, as FinanzOnline computes it from the bases we send
 * (docs/tax-reports.md, "Rounding" and "Austrian U30 Kennzahlen").
 */
export function computeU30(agg: VatAggregates): U30Result {
  const byRate = sumByRate(agg.salesByRate);
  for (const rate of byRate.keys()) {
    if (!(rate in AT_RATE_KZ)) {
      throw taxReportError('UNSUPPORTED_TAX_RATE', `Tax rate ${rate} % has no U30 Kennzahl (Austrian rates: 20, 13, 10, 0)`, [
        { field: 'salesByRate', message: `unsupported rate ${rate}` },
      ]);
    }
  }
  const zero = new D(0);
  const net = (rate: string): Dec => byRate.get(rate) ?? zero;

  const rows = AT_RATES_DESC.map((rate) => {
    const n = net(rate);
    return { taxRate: rate, net: n, tax: rate === '0' ? zero : taxOn(n, rate) };
  });
  const total = rows.reduce((s, r) => s.plus(r.net), zero);
  const outputTax = rows.reduce((s, r) => s.plus(r.tax), zero);
  const inputTax = dec(agg.inputTax, 'inputTax');
  const payable = outputTax.minus(inputTax);

  const rc = dec(agg.reverseChargeEuNet, 'reverseChargeEuNet');
  const icSupply = agg.intraCommunitySupplyNet !== undefined ? dec(agg.intraCommunitySupplyNet, 'intraCommunitySupplyNet') : zero;
  const exports = agg.exportNet !== undefined ? dec(agg.exportNet, 'exportNet') : zero;
  const unclassified = net('0').minus(rc).minus(icSupply).minus(exports);

  const kennzahlen: U30Kennzahlen = {
    '000': money(total),
    '011': money(exports),
    '017': money(icSupply),
    '021': money(rc),
    '022': money(net('20')),
    '029': money(net('10')),
    '006': money(net('13')),
    '060': money(inputTax),
    '095': money(payable),
  };

  return {
    kennzahlen,
    salesByRate: rows.map((r) => ({ taxRate: r.taxRate, net: money(r.net), tax: money(r.tax) })),
    outputTax: money(outputTax),
    inputTax: money(inputTax),
    payable: money(payable),
    unclassifiedZeroRatedNet: money(unclassified),
  };
}
