import { D, type Dec, dec, money, sumByRate, taxOn } from './amounts';
import { taxReportError } from './errors';
import { type VatAggregates, zeroRateParts } from './u30';

/**
 * German Umsatzsteuer-Voranmeldung (UStVA) Kennzahlen from period aggregates. Bases are whole
 * euros, cents truncated (USt 1 A "volle EUR"); the tax on Kz 81/86/89/93/46 is computed from them,
 * half-up, as ELSTER recomputes it, so exactOutputTax is informational. Tax amounts (47, 61, 66,
 * 67, 83) carry cents. The tax owed on § 13b services (Kz 47) and acquisitions (on Kz 89/93) is
 * deducted again in Kz 67 and 61, except by a small business (§ 19: no deduction at all;
 * docs/tax-reports.md, "German UStVA").
 */
export const USTVA_KENNZAHLEN = ['21', '41', '43', '66', '81', '83', '86'] as const;
/** Appear in kennzahlen only when not zero. */
export const USTVA_MORE_KENNZAHLEN = ['45', '46', '47', '48', '61', '67', '87', '89', '93'] as const;
export type UstvaKennzahl = (typeof USTVA_KENNZAHLEN)[number] | (typeof USTVA_MORE_KENNZAHLEN)[number];
export type UstvaKennzahlen = Record<(typeof USTVA_KENNZAHLEN)[number], string> & Partial<Record<(typeof USTVA_MORE_KENNZAHLEN)[number], string>>;

export interface UstvaResult {
  /** Bases as whole-euro strings ("1234", "-56"); 47, 61, 66, 67 and 83 with two places ("12.34"). */
  kennzahlen: UstvaKennzahlen;
  /** Tax on Kz 81 and Kz 86 as the form computes it (from the whole-euro bases). */
  taxKz81: string;
  taxKz86: string;
  /** Σ tax per rate on the exact (cent) bases: what the invoices say; differs by cents at most. */
  exactOutputTax: string;
  salesByRate: Array<{ taxRate: string; net: string; tax: string }>;
  /** All deductible input tax: Kz 66 + 61 + 67. */
  inputTax: string;
  /** = Kz 83. */
  payable: string;
  unclassifiedZeroRatedNet: string;
}

const DE_RATES_DESC = ['19', '7', '0'];
/** Acquisition base Kennzahl by rate: Kz 89 (19 %), Kz 93 (7 %). */
const DE_ACQUISITION_KZ: Record<string, '89' | '93'> = { '19': '89', '7': '93' };

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
  const p = zeroRateParts(agg, net('0'));
  const purchases = !p.purchaseReverseCharge.isZero() || !p.purchaseAcquisition.isZero();
  if (purchases && !(p.purchaseRate in DE_ACQUISITION_KZ)) {
    throw taxReportError('UNSUPPORTED_TAX_RATE', `Tax rate ${p.purchaseRate} % has no UStVA Kennzahl for purchases (German rates: 19, 7)`, [
      { field: 'purchaseTaxRate', message: `unsupported rate ${p.purchaseRate}` },
    ]);
  }
  const small = !!agg.smallBusiness;

  const base81 = wholeEuros(net('19'));
  const base86 = wholeEuros(net('7'));
  const tax81 = taxOn(base81, '19');
  const tax86 = taxOn(base86, '7');
  const base46 = wholeEuros(p.purchaseReverseCharge);
  const tax47 = purchases ? taxOn(base46, p.purchaseRate) : zero;
  const baseAcq = wholeEuros(p.purchaseAcquisition);
  const taxAcq = purchases ? taxOn(baseAcq, p.purchaseRate) : zero;
  const tax66 = small ? zero : dec(agg.inputTax, 'inputTax');
  const tax67 = small ? zero : tax47;
  const tax61 = small ? zero : taxAcq;
  const inputTax = tax66.plus(tax61).plus(tax67);
  const payable = tax81.plus(tax86).plus(tax47).plus(taxAcq).minus(inputTax);

  const rows = DE_RATES_DESC.map((rate) => {
    const n = net(rate);
    return { taxRate: rate, net: n, tax: rate === '0' ? zero : taxOn(n, rate) };
  });
  const exactOutputTax = rows.reduce((s, r) => s.plus(r.tax), zero);

  const kennzahlen: UstvaKennzahlen = {
    '21': euros(p.reverseCharge),
    '41': euros(p.intraCommunitySupply),
    '43': euros(p.export),
    '66': money(tax66),
    '81': euros(base81),
    '83': money(payable),
    '86': euros(base86),
  };
  // § 19 turnover is in no Kennzahl: a small business reports only what it owes on purchases.
  const more: Array<[(typeof USTVA_MORE_KENNZAHLEN)[number], Dec, 'euros' | 'cents']> = [
    ['45', p.notSubject, 'euros'],
    ['46', base46, 'euros'],
    ['47', tax47, 'cents'],
    ['48', p.land.plus(p.exemptOther), 'euros'],
    ['61', tax61, 'cents'],
    ['67', tax67, 'cents'],
    ['87', p.zeroRated, 'euros'],
    ['89', p.purchaseRate === '19' ? baseAcq : zero, 'euros'],
    ['93', p.purchaseRate === '7' ? baseAcq : zero, 'euros'],
  ];
  for (const [kz, v, kind] of more) {
    const text = kind === 'euros' ? euros(v) : money(v);
    if (text !== '0' && text !== '0.00') kennzahlen[kz] = text;
  }

  return {
    kennzahlen,
    taxKz81: money(tax81),
    taxKz86: money(tax86),
    exactOutputTax: money(exactOutputTax),
    salesByRate: rows.map((r) => ({ taxRate: r.taxRate, net: money(r.net), tax: money(r.tax) })),
    inputTax: money(inputTax),
    payable: money(payable),
    unclassifiedZeroRatedNet: money(p.unclassified),
  };
}
