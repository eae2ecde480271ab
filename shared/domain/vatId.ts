/**
 * EU VAT identification numbers: format check by country prefix (the syntax the EU's VIES
 * documents per member state). This is a format check only; whether a number is registered is a
 * VIES question. Greece uses the prefix EL, Northern Ireland XI.
 */
const FORMATS: Record<string, RegExp> = {
  AT: /^ATU\d{8}$/,
  BE: /^BE[01]\d{9}$/,
  BG: /^BG\d{9,10}$/,
  CY: /^CY\d{8}[A-Z]$/,
  CZ: /^CZ\d{8,10}$/,
  DE: /^DE\d{9}$/,
  DK: /^DK\d{8}$/,
  EE: /^EE\d{9}$/,
  EL: /^EL\d{9}$/,
  ES: /^ES[A-Z0-9]\d{7}[A-Z0-9]$/,
  FI: /^FI\d{8}$/,
  FR: /^FR[A-HJ-NP-Z0-9]{2}\d{9}$/,
  HR: /^HR\d{11}$/,
  HU: /^HU\d{8}$/,
  IE: /^IE(\d{7}[A-W][A-I]?|\d[A-Z+*]\d{5}[A-W])$/,
  IT: /^IT\d{11}$/,
  LT: /^LT(\d{9}|\d{12})$/,
  LU: /^LU\d{8}$/,
  LV: /^LV\d{11}$/,
  MT: /^MT\d{8}$/,
  NL: /^NL\d{9}B\d{2}$/,
  PL: /^PL\d{10}$/,
  PT: /^PT\d{9}$/,
  RO: /^RO\d{2,10}$/,
  SE: /^SE\d{10}01$/,
  SI: /^SI\d{8}$/,
  SK: /^SK\d{10}$/,
  XI: /^XI(\d{9}|\d{12}|GD\d{3}|HA\d{3})$/,
};

/** VAT prefixes that differ from the ISO 3166 country code. */
const PREFIX_TO_COUNTRY: Record<string, string> = { EL: 'GR', XI: 'GB' };

/** Upper case without spaces, dots or dashes: "atu 123.456-78" → "ATU12345678". */
export const normalizeVatId = (v: string) => v.replace(/[\s.-]/g, '').toUpperCase();

export function isValidVatId(value: string): boolean {
  const v = normalizeVatId(value);
  const re = FORMATS[v.slice(0, 2)];
  return !!re && re.test(v);
}

/** ISO country of a (valid) VAT ID: "ATU12345678" → "AT", "EL123456789" → "GR"; null when invalid. */
export function vatIdCountry(value: string): string | null {
  if (!isValidVatId(value)) return null;
  const prefix = normalizeVatId(value).slice(0, 2);
  return PREFIX_TO_COUNTRY[prefix] ?? prefix;
}

/** The EU member states (ISO 3166-1 alpha-2) a tenant may be based in. */
export const EU_COUNTRIES = [
  'AT',
  'BE',
  'BG',
  'CY',
  'CZ',
  'DE',
  'DK',
  'EE',
  'ES',
  'FI',
  'FR',
  'GR',
  'HR',
  'HU',
  'IE',
  'IT',
  'LT',
  'LU',
  'LV',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SE',
  'SI',
  'SK',
] as const;

/** The VAT ID prefix of a member state: its ISO code, except Greece (GR → EL). */
export const vatPrefixOf = (country: string) => (country.toUpperCase() === 'GR' ? 'EL' : country.toUpperCase());

/** The VAT ID prefixes of the EU member states (EL for Greece). */
export const EU_VAT_ID_PREFIXES: readonly string[] = EU_COUNTRIES.map(vatPrefixOf);
