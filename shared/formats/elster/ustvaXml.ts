import { D, type Dec, dec, taxOn } from '../../domain/tax/amounts';
import { taxReportError } from '../../domain/tax/errors';
import { type TaxPeriod, elsterZeitraum } from '../../domain/tax/period';
import type { UstvaKennzahl } from '../../domain/tax/ustvaDe';
import { encodeXmlDocument } from '../u30/xmlText';
import { escapeAttr, stripInvalidXmlChars } from '../xml';

/**
 * ELSTER UStVA data file: the `Anmeldungssteuern` element Mein ELSTER's "XML-Daten hochladen"
 * accepts (the ERiC transfer envelope needs a registered Hersteller-ID and is not produced).
 * Namespace and version per year, ISO-8859-15; names and formats as in the last public schema,
 * usta_201301.xsd (docs/tax-reports.md, "What the XML is" and "What is validated against what").
 */
export interface ElsterUstvaInput {
  year: number;
  /** "01".."12" (month) or "41".."44" (quarter), or a TaxPeriod. */
  period: string | TaxPeriod;
  /** 13-digit ELSTER Steuernummer (Bundeseinheitliches Format: FA number, 0, 8 digits). */
  steuernummer: string;
  /** From computeUstvaDe(): bases in whole euros, tax amounts (47, 61, 66, 67, 83) with cents. Missing = 0. */
  kennzahlen: Partial<Record<UstvaKennzahl, string>>;
  /** From computeUstvaDe(); a non-zero value is refused (unassigned 0 % turnover). */
  unclassifiedZeroRatedNet?: string;
  /** Datenlieferant (the company sending the data). */
  company: { name: string; street: string; postalCode: string; city: string; phone?: string; email?: string };
  /** Erstellungsdatum (Europe/Berlin calendar date); default now. */
  createdAt?: Date;
  /** Kz 09: 5-digit Hersteller-ID (ELSTER ignores it on the portal upload; ERiC requires it). */
  herstellerId?: string;
  /** Kz 10 = 1: this is a corrected return (berichtigte Anmeldung). */
  corrected?: boolean;
  /** Schema version; defaults to the tax year (ELSTER publishes one payload schema per year). */
  schemaVersion?: number;
}

/** Kennzahlen in whole euros (Bemessungsgrundlagen) and with cents (tax amounts). */
const WHOLE_EURO_KZ: UstvaKennzahl[] = ['21', '41', '43', '45', '46', '48', '81', '86', '87', '89', '93'];
const CENT_KZ: UstvaKennzahl[] = ['47', '61', '66', '67', '83'];

export const ELSTER_USTVA_NAMESPACE = (version: number) => `http://finkonsens.de/elster/elsteranmeldung/ustva/v${version}`;

/** ELSTER 13-digit Steuernummer; separators are tolerated, Länder formats are not converted. */
export function normalizeElsterSteuernummer(value: string): string {
  const digits = typeof value === 'string' ? value.replace(/[\s/.-]/g, '') : '';
  if (!/^\d{4}0\d{8}$/.test(digits)) {
    throw taxReportError(
      'INVALID_TAX_NUMBER',
      'steuernummer must be the 13-digit ELSTER format (Finanzamtsnummer, 0, Bezirk, Unterscheidungsnummer, Prüfziffer), e.g. 9198011310010',
      [{ field: 'steuernummer', message: 'not a 13-digit ELSTER Steuernummer' }],
    );
  }
  return digits;
}

const berlinDate = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin', year: 'numeric', month: '2-digit', day: '2-digit' });

/** Text for the Datenlieferant fields: no control characters, no leading blank, at most `max`. */
function field(value: string | undefined, name: string, max: number, required: boolean): string | undefined {
  const v = stripInvalidXmlChars(value ?? '')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ELSTER's text fields take no control characters (C0 and C1)
    .replace(/[\u0000-\u001F\u007F-\u009F]/g, ' ')
    .trim()
    .slice(0, max)
    .trim();
  if (!v) {
    if (required)
      throw taxReportError('INVALID_BOOKING', `company.${name} is required for the ELSTER Datenlieferant`, [
        { field: `company.${name}`, message: 'is required' },
      ]);
    return undefined;
  }
  return v;
}

function zeitraumOf(period: ElsterUstvaInput['period']): string {
  const z = typeof period === 'string' ? period : elsterZeitraum(period);
  if (!/^(0[1-9]|1[0-2]|4[1-4])$/.test(z)) {
    throw taxReportError('PERIOD_NOT_SUPPORTED', 'period must be 01-12 (month) or 41-44 (quarter)', [{ field: 'period', message: 'invalid Zeitraum' }]);
  }
  return z;
}

export function buildElsterUstvaXml(input: ElsterUstvaInput): Buffer {
  if (!Number.isInteger(input.year) || input.year < 2000 || input.year > 2999) {
    throw taxReportError('PERIOD_NOT_SUPPORTED', 'year must be a four-digit year', [{ field: 'year', message: 'invalid' }]);
  }
  if (typeof input.period !== 'string' && input.period.year !== input.year) {
    throw taxReportError('PERIOD_NOT_SUPPORTED', 'period is not in year', [{ field: 'period', message: 'year mismatch' }]);
  }
  const zeitraum = zeitraumOf(input.period);
  const stnr = normalizeElsterSteuernummer(input.steuernummer);
  if (input.herstellerId !== undefined && !/^\d{5}$/.test(input.herstellerId)) {
    throw taxReportError('INVALID_BOOKING', 'herstellerId (Kz 09) must be 5 digits', [{ field: 'herstellerId', message: 'must be 5 digits' }]);
  }
  if (input.unclassifiedZeroRatedNet !== undefined && !dec(input.unclassifiedZeroRatedNet, 'unclassifiedZeroRatedNet').isZero()) {
    throw taxReportError(
      'UNCLASSIFIED_ZERO_RATED',
      `${input.unclassifiedZeroRatedNet} EUR of 0 % turnover has no VAT situation (reverse charge Kz 21, intra-Community supply Kz 41, export Kz 43, exempt Kz 48, zero rate Kz 87, not subject Kz 45) and cannot be filed automatically`,
      [{ field: 'unclassifiedZeroRatedNet', message: 'must be 0' }],
    );
  }

  const values = new Map<UstvaKennzahl, Dec>();
  for (const kz of WHOLE_EURO_KZ) {
    const raw = input.kennzahlen[kz];
    const v = raw === undefined ? new D(0) : dec(raw, `kennzahlen.${kz}`);
    if (!v.isInteger()) {
      throw taxReportError('INVALID_AMOUNT', `Kz ${kz} is a Bemessungsgrundlage in whole euros, got ${raw}`, [
        { field: `kennzahlen.${kz}`, message: 'must be whole euros' },
      ]);
    }
    if (v.abs().greaterThan('9999999999999')) throw taxReportError('INVALID_AMOUNT', `Kz ${kz} is too large`);
    values.set(kz, v);
  }
  for (const kz of CENT_KZ) {
    const raw = input.kennzahlen[kz];
    const v = raw === undefined ? new D(0) : dec(raw, `kennzahlen.${kz}`);
    if (v.decimalPlaces() > 2) {
      throw taxReportError('INVALID_AMOUNT', `Kz ${kz} has more than two decimal places`, [{ field: `kennzahlen.${kz}`, message: 'at most 2 decimals' }]);
    }
    if (v.abs().greaterThan('99999999999.99')) throw taxReportError('INVALID_AMOUNT', `Kz ${kz} is too large`);
    values.set(kz, v);
  }
  // The portal takes Kz 83 as given instead of recomputing it, so a wrong one would be filed
  // silently: it must equal the tax on the whole-euro bases (sales and acquisitions), plus the
  // § 13b tax, minus the input tax.
  const v = (kz: UstvaKennzahl) => values.get(kz)!;
  const expected83 = taxOn(v('81'), '19')
    .plus(taxOn(v('86'), '7'))
    .plus(taxOn(v('89'), '19'))
    .plus(taxOn(v('93'), '7'))
    .plus(v('47'))
    .minus(v('66'))
    .minus(v('61'))
    .minus(v('67'));
  if (!expected83.equals(v('83'))) {
    throw taxReportError(
      'INVALID_AMOUNT',
      `Kz 83 (${v('83').toFixed(2)}) must be 19 % of Kz 81 + 7 % of Kz 86 + 19 % of Kz 89 + 7 % of Kz 93 + Kz 47 − Kz 66 − Kz 61 − Kz 67 = ${expected83.toFixed(2)}`,
      [{ field: 'kennzahlen.83', message: 'inconsistent with Kz 81, 86, 89, 93, 47, 66, 61, 67' }],
    );
  }

  const kzText = (kz: UstvaKennzahl) => {
    const v = values.get(kz)!;
    const s = CENT_KZ.includes(kz) ? v.toFixed(2) : v.toFixed(0);
    return s === '-0' ? '0' : s === '-0.00' ? '0.00' : s;
  };
  // Numeric order of the Kennzahlen; zeros are left out, except the mandatory Kz 83.
  const kzLines = [...WHOLE_EURO_KZ, ...CENT_KZ]
    .sort((a, b) => Number(a) - Number(b))
    .filter((kz) => kz === '83' || !values.get(kz)!.isZero())
    .map((kz) => `\t\t\t<Kz${kz}>${kzText(kz)}</Kz${kz}>\n`)
    .join('');

  const c = input.company;
  const name = field(c.name, 'name', 45, true)!;
  const street = field(c.street, 'street', 30, true)!;
  const plz = field(c.postalCode, 'postalCode', 12, true)!;
  const city = field(c.city, 'city', 30, true)!;
  const phone = field(c.phone, 'phone', 20, false);
  const email = field(c.email, 'email', 70, false);
  const version = input.schemaVersion ?? input.year;
  const created = berlinDate.format(input.createdAt ?? new Date()).replace(/-/g, '');

  const xml =
    '<?xml version="1.0" encoding="ISO-8859-15" standalone="no"?>\n' +
    `<Anmeldungssteuern xmlns="${ELSTER_USTVA_NAMESPACE(version)}" version="${version}">\n` +
    `\t<Erstellungsdatum>${created}</Erstellungsdatum>\n` +
    '\t<DatenLieferant>\n' +
    `\t\t<Name>${escapeAttr(name)}</Name>\n` +
    `\t\t<Strasse>${escapeAttr(street)}</Strasse>\n` +
    `\t\t<PLZ>${escapeAttr(plz)}</PLZ>\n` +
    `\t\t<Ort>${escapeAttr(city)}</Ort>\n` +
    (phone ? `\t\t<Telefon>${escapeAttr(phone)}</Telefon>\n` : '') +
    (email ? `\t\t<Email>${escapeAttr(email)}</Email>\n` : '') +
    '\t</DatenLieferant>\n' +
    '\t<Steuerfall>\n' +
    '\t\t<Umsatzsteuervoranmeldung>\n' +
    `\t\t\t<Jahr>${input.year}</Jahr>\n` +
    `\t\t\t<Zeitraum>${zeitraum}</Zeitraum>\n` +
    `\t\t\t<Steuernummer>${stnr}</Steuernummer>\n` +
    (input.herstellerId ? `\t\t\t<Kz09>${input.herstellerId}</Kz09>\n` : '') +
    (input.corrected ? '\t\t\t<Kz10>1</Kz10>\n' : '') +
    kzLines +
    '\t\t</Umsatzsteuervoranmeldung>\n' +
    '\t</Steuerfall>\n' +
    '</Anmeldungssteuern>\n';

  return encodeXmlDocument(xml, 'ISO-8859-15');
}
