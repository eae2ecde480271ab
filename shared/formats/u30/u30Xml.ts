import { D, type Dec, dec } from '../../domain/tax/amounts';
import { taxReportError } from '../../domain/tax/errors';
import { type TaxPeriod, monthPeriod, quarterPeriod, periodYearMonths } from '../../domain/tax/period';
import type { U30Kennzahl } from '../../domain/tax/u30';
import { buildBmfEnvelope } from './bmfEnvelope';

/**
 * FinanzOnline U30 upload file (BMF "ERKLAERUNGS_UEBERMITTLUNG", one ERKLAERUNG art="U30"),
 * schema 01_2022 up to period 2026-06, 07_2026 from 2026-07. The bases and the tax amounts the form
 * asks for (057, 060, 065, 066) are sent: FinanzOnline computes the tax on the bases and KZ 095. Type "kz" must be >= 0.01, so zeros are omitted and a
 * negative base cannot be sent at all (docs/tax-reports.md, "U30 XML").
 */
export interface U30XmlInput {
  period: TaxPeriod | { year: number; month: number } | { year: number; quarter: number };
  /** Steuernummer (FASTNR) of the taxpayer: 9 digits, also as "12-345/6789" or "12 345/6789". */
  taxNumber: string;
  /** From computeU30(); missing Kennzahlen count as 0. KZ 095 is ignored (FinanzOnline computes it). */
  kennzahlen: Partial<Record<U30Kennzahl, string>>;
  /** FASTNR of the party transmitting (INFO_DATEN), e.g. a tax advisor; defaults to taxNumber. */
  submittedBy?: string;
  /** Creation time written to INFO_DATEN (Europe/Vienna wall clock); default now. */
  createdAt?: Date;
  /** PAKET_NR, the sender's running package number (1..999999999); default 1. */
  packageNumber?: number;
  /** KUNDENINFO: free text, at most 50 characters (e.g. our submission id). */
  customerInfo?: string;
}

const SCHEMA_2022 = 'u30-finanzonline/BMF_ERKLAERUNGS_UEBERMITTLUNG_U30_01_2022.xsd';
const SCHEMA_2026_07 = 'u30-finanzonline/BMF_ERKLAERUNGS_UEBERMITTLUNG_U30_07_2026.xsd';

function toPeriod(p: U30XmlInput['period']): TaxPeriod {
  if ('kind' in p) return p;
  return 'month' in p ? monthPeriod(p.year, p.month) : quarterPeriod(p.year, p.quarter);
}

/**
 * The XSD a period's file must validate against, relative to the shared schemas directory.
 * The 07_2026 schema applies from period 2026-07 (it adds KZ 124/125, which we never write);
 * everything before uses 01_2022 (earlier BMF schemas had the same structure for our Kennzahlen).
 */
export function u30XsdFor(period: U30XmlInput['period']): string {
  const { from } = periodYearMonths(toPeriod(period));
  return from >= '2026-07' ? SCHEMA_2026_07 : SCHEMA_2022;
}

/** FASTNR from the usual spellings ("12-345/6789", "12 345/6789", "123456789"). */
export function normalizeAtTaxNumber(value: string, field = 'taxNumber'): string {
  const digits = typeof value === 'string' ? value.replace(/[\s\-/.]/g, '') : '';
  // XSD: 9 digits, 010000010 .. 989999999 (2-digit Finanzamt code + 7-digit number).
  if (!/^\d{9}$/.test(digits) || digits < '010000010' || digits > '989999999') {
    throw taxReportError('INVALID_TAX_NUMBER', `${field} must be an Austrian Steuernummer (FA code + 7 digits, e.g. 12-345/6789)`, [
      { field, message: 'must be 9 digits (Finanzamt code + Steuernummer)' },
    ]);
  }
  return digits;
}

/** U30 element order inside each group, as in the XSD sequences. */
const HEAD_KZ: U30Kennzahl[] = ['021'];
const STEUERFREI_KZ: U30Kennzahl[] = ['011', '017', '019', '016', '020'];
/** Bases by rate; KZ 057 (tax owed on reverse-charge purchases) follows them in the same group. */
const VERSTEUERT_BASES: U30Kennzahl[] = ['022', '029', '006'];
const VERSTEUERT_KZ: U30Kennzahl[] = [...VERSTEUERT_BASES, '057'];
const IGE_TOTAL: U30Kennzahl = '070';
const VERSTEUERT_IGE_KZ: U30Kennzahl[] = ['072', '073', '008'];
const VORSTEUER_KZ: U30Kennzahl[] = ['060', '065', '066'];
const TRANSMITTED: U30Kennzahl[] = ['000', ...HEAD_KZ, ...STEUERFREI_KZ, ...VERSTEUERT_KZ, IGE_TOTAL, ...VERSTEUERT_IGE_KZ, ...VORSTEUER_KZ];

const MAX_KZ = new D('9999999999999.99');

export function buildU30Xml(input: U30XmlInput): Buffer {
  const period = toPeriod(input.period);
  const fastnr = normalizeAtTaxNumber(input.taxNumber);
  const submitter = input.submittedBy !== undefined ? normalizeAtTaxNumber(input.submittedBy, 'submittedBy') : fastnr;
  const packageNumber = input.packageNumber ?? 1;
  if (!Number.isInteger(packageNumber) || packageNumber < 1 || packageNumber > 999_999_999) {
    throw taxReportError('INVALID_BOOKING', 'packageNumber must be an integer from 1 to 999999999', [{ field: 'packageNumber', message: 'out of range' }]);
  }

  const values = new Map<U30Kennzahl, Dec>();
  for (const kz of TRANSMITTED) {
    const raw = input.kennzahlen[kz];
    const v = raw === undefined ? new D(0) : dec(raw, `kennzahlen.${kz}`);
    if (v.decimalPlaces() > 2) {
      throw taxReportError('INVALID_AMOUNT', `KZ ${kz} must have at most two decimal places`, [{ field: `kennzahlen.${kz}`, message: 'more than 2 decimals' }]);
    }
    if (v.isNegative()) {
      throw taxReportError(
        'NEGATIVE_KENNZAHL',
        `KZ ${kz} is negative (${raw}); the U30 upload only accepts positive amounts. File this period manually (corrections via KZ 090).`,
        [{ field: `kennzahlen.${kz}`, message: 'negative' }],
      );
    }
    if (v.greaterThan(MAX_KZ)) {
      throw taxReportError('INVALID_AMOUNT', `KZ ${kz} exceeds the U30 maximum`, [{ field: `kennzahlen.${kz}`, message: 'too large' }]);
    }
    values.set(kz, v);
  }

  // FinanzOnline checks 000 − 021 − steuerfrei = Σ versteuert; refuse a file that would fail it.
  const total = values.get('000')!;
  const parts = [...HEAD_KZ, ...STEUERFREI_KZ, ...VERSTEUERT_BASES].reduce((s, kz) => s.plus(values.get(kz)!), new D(0));
  if (!total.equals(parts)) {
    throw taxReportError(
      'UNCLASSIFIED_ZERO_RATED',
      `KZ 000 (${total.toFixed(2)}) is not the sum of KZ 021, 011, 017, 019, 016, 020, 022, 029 and 006 (${parts.toFixed(2)}): ` +
        'some 0 % turnover has no VAT situation (reverse charge, intra-Community supply, export, exempt) and cannot be filed automatically',
      [{ field: 'kennzahlen.000', message: 'bases do not add up' }],
    );
  }
  // Same check for acquisitions: KZ 070 is the sum of the bases by rate (no tax-free acquisitions, KZ 071).
  const acquisitions = VERSTEUERT_IGE_KZ.reduce((s, kz) => s.plus(values.get(kz)!), new D(0));
  if (!values.get(IGE_TOTAL)!.equals(acquisitions)) {
    throw taxReportError('INVALID_AMOUNT', `KZ 070 (${values.get(IGE_TOTAL)!.toFixed(2)}) is not the sum of KZ 072, 073 and 008 (${acquisitions.toFixed(2)})`, [
      { field: 'kennzahlen.070', message: 'acquisition bases do not add up' },
    ]);
  }

  const kzLine = (kz: U30Kennzahl, indent: string) => {
    const v = values.get(kz)!;
    // Type "kz" needs >= 0.01: omit zeros (KZ 000 is "kznull" and always present).
    if (kz !== '000' && v.isZero()) return '';
    return `${indent}<KZ${kz} type="kz">${v.toFixed(2)}</KZ${kz}>\n`;
  };
  const group = (name: string, kzs: U30Kennzahl[], indent: string) => {
    const body = kzs.map((kz) => kzLine(kz, `${indent}\t`)).join('');
    return body ? `${indent}<${name}>\n${body}${indent}</${name}>\n` : '';
  };

  const body =
    '\t\t<LIEFERUNGEN_LEISTUNGEN_EIGENVERBRAUCH>\n' +
    kzLine('000', '\t\t\t') +
    HEAD_KZ.map((kz) => kzLine(kz, '\t\t\t')).join('') +
    group('STEUERFREI', STEUERFREI_KZ, '\t\t\t') +
    group('VERSTEUERT', VERSTEUERT_KZ, '\t\t\t') +
    '\t\t</LIEFERUNGEN_LEISTUNGEN_EIGENVERBRAUCH>\n' +
    (values.get(IGE_TOTAL)!.isZero()
      ? ''
      : '\t\t<INNERGEMEINSCHAFTLICHE_ERWERBE>\n' +
        kzLine(IGE_TOTAL, '\t\t\t') +
        group('VERSTEUERT_IGE', VERSTEUERT_IGE_KZ, '\t\t\t') +
        '\t\t</INNERGEMEINSCHAFTLICHE_ERWERBE>\n') +
    group('VORSTEUER', VORSTEUER_KZ, '\t\t');
  return buildBmfEnvelope({
    art: 'U30',
    period,
    fastnr,
    submitter,
    packageNumber,
    createdAt: input.createdAt ?? new Date(),
    customerInfo: input.customerInfo,
    body,
  });
}
