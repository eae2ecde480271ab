import { D, type Dec, dec, money, sumByRate, taxOn } from './amounts';
import { taxReportError } from './errors';

/**
 * Aggregates the report queries deliver for one period (decimal strings, 2 places; fields in
 * docs/tax-reports.md, "Input: period aggregates"). salesByRate holds every sales line by rate;
 * the optional parts split the 0 % turnover by VAT situation (docs/vat-categories.md). 0 %
 * turnover no part covers is unclassifiedZeroRatedNet: the JSON report shows it, the XML writers
 * refuse it, as the authority's plausibility check would reject the return.
 */
export interface VatAggregates {
  salesByRate: ReadonlyArray<{ taxRate: string; net: string }>;
  /** 0 % sales under reverse charge to businesses in other member states (AE). */
  reverseChargeEuNet: string;
  /** Deductible VAT of incoming invoices (their total_tax); ignored for a small business. */
  inputTax: string;
  intraCommunitySupplyNet?: string;
  exportNet?: string;
  /** DE § 12 Abs. 3 UStG zero rate (Z); Austria has none. */
  zeroRatedNet?: string;
  /** Exempt sales under the small-business scheme (AT § 6 Abs. 1 Z 27, DE § 19). */
  exemptSmallBusinessNet?: string;
  /** Exempt land transactions (AT § 6 Abs. 1 Z 9 lit. a: KZ 019). */
  exemptLandNet?: string;
  /** Every other exempt sale (without input tax deduction). */
  exemptOtherNet?: string;
  /** Outside the scope (O): not in the U30; UStVA Kz 45. */
  notSubjectNet?: string;
  /** The tenant's small-business scheme: no input tax deduction at all (incoming VAT is cost). */
  smallBusiness?: boolean;
  /** Net of incoming services from other member states where the tenant owes the VAT (§ 19 Abs. 1 / § 13b). */
  purchaseReverseChargeNet?: string;
  /** Net of intra-Community acquisitions of goods. */
  purchaseAcquisitionNet?: string;
  /** The rate the tenant owes on those purchases: its country's standard rate (20 AT, 19 DE). */
  purchaseTaxRate?: string;
}

/** Always present in kennzahlen; the others appear only when they are not zero. */
export const U30_KENNZAHLEN = ['000', '011', '017', '021', '022', '029', '006', '060', '095'] as const;
export const U30_MORE_KENNZAHLEN = ['016', '019', '020', '057', '066', '070', '072', '073', '008', '065'] as const;
export type U30Kennzahl = (typeof U30_KENNZAHLEN)[number] | (typeof U30_MORE_KENNZAHLEN)[number];
export type U30Kennzahlen = Record<(typeof U30_KENNZAHLEN)[number], string> & Partial<Record<(typeof U30_MORE_KENNZAHLEN)[number], string>>;

export interface U30Result {
  /** Kennzahlen as 2-place decimal strings: the core set always ("0.00" where nothing applies), the others when not zero. */
  kennzahlen: U30Kennzahlen;
  /** One row per Austrian rate (20, 13, 10, 0), tax half-up on the summed net of the rate. */
  salesByRate: Array<{ taxRate: string; net: string; tax: string }>;
  /** Output tax on sales (without the tax owed on purchases: KZ 057 and the acquisitions). */
  outputTax: string;
  /** All deductible input tax: KZ 060 + 065 + 066. */
  inputTax: string;
  /** KZ 095: output tax + tax owed on purchases − input tax; negative is a credit (Gutschrift). */
  payable: string;
  /** 0 % turnover not assigned to any KZ (see VatAggregates). */
  unclassifiedZeroRatedNet: string;
}

/** Austrian rates and their U30 base Kennzahl (UStG 1994 § 10: 20 %, 10 %, 13 %). */
const AT_RATE_KZ: Record<string, U30Kennzahl | null> = { '20': '022', '13': '006', '10': '029', '0': null };
const AT_RATES_DESC = ['20', '13', '10', '0'];
/** Acquisition bases by rate (KZ 072 20 %, 073 10 %, 008 13 %). */
const AT_ACQUISITION_KZ: Record<string, U30Kennzahl> = { '20': '072', '10': '073', '13': '008' };

const optional = (value: string | undefined, field: string, zero: Dec): Dec => (value !== undefined ? dec(value, field) : zero);

/** The 0 % parts every return splits the same way; unclassified is what none of them covers. */
export function zeroRateParts(agg: VatAggregates, zeroNet: Dec) {
  const zero = new D(0);
  const parts = {
    reverseCharge: dec(agg.reverseChargeEuNet, 'reverseChargeEuNet'),
    intraCommunitySupply: optional(agg.intraCommunitySupplyNet, 'intraCommunitySupplyNet', zero),
    export: optional(agg.exportNet, 'exportNet', zero),
    zeroRated: optional(agg.zeroRatedNet, 'zeroRatedNet', zero),
    smallBusiness: optional(agg.exemptSmallBusinessNet, 'exemptSmallBusinessNet', zero),
    land: optional(agg.exemptLandNet, 'exemptLandNet', zero),
    exemptOther: optional(agg.exemptOtherNet, 'exemptOtherNet', zero),
    notSubject: optional(agg.notSubjectNet, 'notSubjectNet', zero),
  };
  const unclassified = Object.values(parts).reduce((s, v) => s.minus(v), zeroNet);
  const purchaseRate = agg.purchaseTaxRate ?? '0';
  return {
    ...parts,
    unclassified,
    purchaseReverseCharge: optional(agg.purchaseReverseChargeNet, 'purchaseReverseChargeNet', zero),
    purchaseAcquisition: optional(agg.purchaseAcquisitionNet, 'purchaseAcquisitionNet', zero),
    purchaseRate,
  };
}

/**
 * U30 Kennzahlen from period aggregates. Pure. KZ 000 holds every sale in the U30's scope (not
 * notSubject), so FinanzOnline's "000 − 021 − steuerfrei = Σ versteuert" check holds. Tax per rate
 * is computed once on the rate's summed net, half-up, as FinanzOnline computes it from the bases we
 * send (docs/tax-reports.md, "Rounding" and "Austrian U30 Kennzahlen"). Purchases under reverse
 * charge: the tax owed (KZ 057) is deducted again (KZ 066); acquisitions: base KZ 070 and by rate,
 * tax deducted in KZ 065. A small business deducts nothing (060/065/066 stay 0).
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
  const p = zeroRateParts(agg, net('0'));
  if (!p.purchaseReverseCharge.isZero() || !p.purchaseAcquisition.isZero()) {
    if (!(p.purchaseRate in AT_ACQUISITION_KZ)) {
      throw taxReportError('UNSUPPORTED_TAX_RATE', `Tax rate ${p.purchaseRate} % has no U30 Kennzahl for purchases (Austrian rates: 20, 13, 10)`, [
        { field: 'purchaseTaxRate', message: `unsupported rate ${p.purchaseRate}` },
      ]);
    }
  }

  const rows = AT_RATES_DESC.map((rate) => {
    const n = net(rate);
    return { taxRate: rate, net: n, tax: rate === '0' ? zero : taxOn(n, rate) };
  });
  const total = rows.reduce((s, r) => s.plus(r.net), zero).minus(p.notSubject);
  const outputTax = rows.reduce((s, r) => s.plus(r.tax), zero);
  const small = !!agg.smallBusiness;
  const tax057 = p.purchaseReverseCharge.isZero() ? zero : taxOn(p.purchaseReverseCharge, p.purchaseRate);
  const taxAcquisition = p.purchaseAcquisition.isZero() ? zero : taxOn(p.purchaseAcquisition, p.purchaseRate);
  const tax060 = small ? zero : dec(agg.inputTax, 'inputTax');
  const tax066 = small ? zero : tax057;
  const tax065 = small ? zero : taxAcquisition;
  const inputTax = tax060.plus(tax065).plus(tax066);
  const payable = outputTax.plus(tax057).plus(taxAcquisition).minus(inputTax);

  const kennzahlen: U30Kennzahlen = {
    '000': money(total),
    '011': money(p.export),
    '017': money(p.intraCommunitySupply),
    '021': money(p.reverseCharge),
    '022': money(net('20')),
    '029': money(net('10')),
    '006': money(net('13')),
    '060': money(tax060),
    '095': money(payable),
  };
  const more: Array<[(typeof U30_MORE_KENNZAHLEN)[number], Dec]> = [
    ['016', p.smallBusiness],
    ['019', p.land],
    ['020', p.exemptOther],
    ['057', tax057],
    ['066', tax066],
    ['070', p.purchaseAcquisition],
    ['072', p.purchaseRate === '20' ? p.purchaseAcquisition : zero],
    ['073', p.purchaseRate === '10' ? p.purchaseAcquisition : zero],
    ['008', p.purchaseRate === '13' ? p.purchaseAcquisition : zero],
    ['065', tax065],
  ];
  for (const [kz, v] of more) if (!v.isZero()) kennzahlen[kz] = money(v);

  return {
    kennzahlen,
    salesByRate: rows.map((r) => ({ taxRate: r.taxRate, net: money(r.net), tax: money(r.tax) })),
    outputTax: money(outputTax),
    inputTax: money(inputTax),
    payable: money(payable),
    // Austria has no zero rate: such turnover has no Kennzahl and stays unclassified.
    unclassifiedZeroRatedNet: money(p.unclassified.plus(p.zeroRated)),
  };
}
