/**
 * Our free-form stored addresses parsed into the structured postal address both e-invoice
 * syntaxes need (street, postcode, city, country). Rules: docs/e-invoicing.md, "Parties and addresses".
 */
import { stripInvalidXmlChars } from '../xml';
import { isIsoCountry, vatIdCountry } from './countries';

/** Country names and abbreviations recognised at the end of a free-form address. */
const COUNTRY_ALIASES: Record<string, string> = {
  österreich: 'AT',
  oesterreich: 'AT',
  austria: 'AT',
  deutschland: 'DE',
  germany: 'DE',
  brd: 'DE',
  schweiz: 'CH',
  switzerland: 'CH',
  suisse: 'CH',
  svizzera: 'CH',
  liechtenstein: 'LI',
  italien: 'IT',
  italy: 'IT',
  italia: 'IT',
  frankreich: 'FR',
  france: 'FR',
  niederlande: 'NL',
  netherlands: 'NL',
  nederland: 'NL',
  belgien: 'BE',
  belgium: 'BE',
  luxemburg: 'LU',
  luxembourg: 'LU',
  tschechien: 'CZ',
  czechia: 'CZ',
  'czech republic': 'CZ',
  slowakei: 'SK',
  slovakia: 'SK',
  ungarn: 'HU',
  hungary: 'HU',
  slowenien: 'SI',
  slovenia: 'SI',
  polen: 'PL',
  poland: 'PL',
  spanien: 'ES',
  spain: 'ES',
  dänemark: 'DK',
  denmark: 'DK',
  schweden: 'SE',
  sweden: 'SE',
  kroatien: 'HR',
  croatia: 'HR',
  'united kingdom': 'GB',
  'vereinigtes königreich': 'GB',
};

/** Old licence-plate style prefixes in front of postcodes ("A-1010 Wien", "D-80331 München"). */
const POSTCODE_PREFIXES: Record<string, string> = {
  A: 'AT',
  D: 'DE',
  I: 'IT',
  F: 'FR',
  B: 'BE',
  L: 'LU',
  H: 'HU',
  FL: 'LI',
  CH: 'CH',
  AT: 'AT',
  DE: 'DE',
  IT: 'IT',
  FR: 'FR',
  BE: 'BE',
  LU: 'LU',
  HU: 'HU',
  LI: 'LI',
  CZ: 'CZ',
  SK: 'SK',
  SI: 'SI',
  NL: 'NL',
  PL: 'PL',
  DK: 'DK',
};

export interface PostalAddress {
  /** Street line first (BT-35), then additional lines such as "c/o" (BT-36, BT-162). */
  lines: string[];
  postcode: string | null;
  city: string | null;
  country: string;
}

const POSTCODE_LINE_RE = /^(?:([A-Za-z]{1,2})\s*[-–]\s*)?(\d{4,5})\s+(\S.*)$/;

/**
 * Parses the free-form address we store (lines separated by "\n" or ", "): a trailing country
 * line, the last "[A-|D-|CH-]PLZ Ort" line as postcode and city, the line before it as street.
 * Country precedence: party country, address, VAT id prefix, then the fallback (the seller's:
 * domestic customers are the common case). Rules: docs/e-invoicing.md, "Parties and addresses".
 */
export function parsePostalAddress(
  raw: string | null | undefined,
  opts: { country?: string | null; vatId?: string | null; fallbackCountry: string; partyNames?: Array<string | null | undefined> },
): PostalAddress {
  let lines = stripInvalidXmlChars(raw ?? '')
    .split(/\r?\n|\r|,/)
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter((l) => l !== '');

  let addressCountry: string | null = null;
  const last = lines[lines.length - 1];
  if (last !== undefined) {
    const alias = COUNTRY_ALIASES[last.toLowerCase()];
    if (alias) addressCountry = alias;
    else if (/^[A-Z]{2}$/.test(last) && lines.length > 1) addressCountry = last;
    if (addressCountry) lines = lines.slice(0, -1);
  }

  const names = (opts.partyNames ?? []).filter((n): n is string => !!n).map((n) => n.trim().toLowerCase());
  if (lines.length > 1 && names.includes(lines[0].toLowerCase())) lines = lines.slice(1);

  let postcode: string | null = null;
  let city: string | null = null;
  let zipIndex = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = POSTCODE_LINE_RE.exec(lines[i]);
    if (m) {
      zipIndex = i;
      postcode = m[2];
      city = m[3].trim();
      const prefix = m[1]?.toUpperCase();
      if (prefix && POSTCODE_PREFIXES[prefix] && !addressCountry) addressCountry = POSTCODE_PREFIXES[prefix];
      break;
    }
  }

  let addressLines: string[];
  if (zipIndex >= 0) {
    const before = lines.slice(0, zipIndex);
    const after = lines.slice(zipIndex + 1);
    const street = before.length > 0 ? before[before.length - 1] : null;
    addressLines = [...(street ? [street] : []), ...before.slice(0, -1), ...after];
  } else {
    addressLines = lines;
  }

  const explicit = opts.country?.trim().toUpperCase();
  const country = isIsoCountry(explicit) ? explicit : (addressCountry ?? vatIdCountry(opts.vatId) ?? opts.fallbackCountry.toUpperCase());
  return { lines: addressLines, postcode, city, country };
}
