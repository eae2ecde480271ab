import { D, type Dec, dec, money, sumByRate, taxOn } from './amounts';
import { taxReportError } from './errors';

/**
 * Aggregates the report queries deliver for one period (decimal strings, 2 places):
 * - salesByRate: net turnover per tax rate, finalized invoices minus credit notes (so a net may be
 *   negative); several rows with the same rate are added up.
 * - reverseChargeEuNet: the part of the 0 % turnover that is B2B services to EU businesses where
 *   the customer owes the tax (reverse charge; AT KZ 021, DE Kz 21).
 * - inputTax: deductible input tax from incoming invoices.
 * - optional further parts of the 0 % turnover: intra-Community supplies (AT KZ 017, DE Kz 41)
 *   and exports (AT KZ 011, DE Kz 43). 0 % turnover not covered by one of these parts is reported
 *   as unclassifiedZeroRatedNet: the JSON report shows it, the XML writers refuse it, because the
 *   authority's plausibility check would reject a return whose bases do not add up.
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
 * U30 Kennzahlen from period aggregates. Pure; amounts in, amounts out.
 * KZ 000 is the total of all bases incl. 0 % (KZ 021/011/017 are parts of it, so FinanzOnline's
 * "000 − 021 − steuerfrei = Σ versteuert" check holds); 022/029/006 are the bases at 20/10/13 %;
 * 060 the input tax; 095 output tax − input tax. Tax per rate is computed once on the summed net
 * of that rate, rounded half-up (decisions.md, General), which is also how FinanzOnline computes
 * the tax from the bases we transmit.
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
