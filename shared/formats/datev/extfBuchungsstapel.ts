import { Readable } from 'node:stream';
import iconv from 'iconv-lite';
import { taxReportError } from '../../domain/tax/errors';
import { wallClockIn } from '../../domain/dates';

/**
 * DATEV-Format "Buchungsstapel" (EXTF, header version 700, category 21, format version 13) per
 * developer.datev.de: Windows-1252 without BOM, ";" separators, CRLF after every line, quoted
 * text, decimal-comma amounts always positive (the side is the S/H flag). Line 1 is the header,
 * line 2 the 125 column headings, then one line per booking (docs/tax-reports.md, "DATEV EXTF").
 */

/** Column headings of Formatversion 13, in the official order (125 columns). */
export const DATEV_COLUMNS = [
  'Umsatz (ohne Soll/Haben-Kz)',
  'Soll/Haben-Kennzeichen',
  'WKZ Umsatz',
  'Kurs',
  'Basis-Umsatz',
  'WKZ Basis-Umsatz',
  'Konto',
  'Gegenkonto (ohne BU-Schlüssel)',
  'BU-Schlüssel',
  'Belegdatum',
  'Belegfeld 1',
  'Belegfeld 2',
  'Skonto',
  'Buchungstext',
  'Postensperre',
  'Diverse Adressnummer',
  'Geschäftspartnerbank',
  'Sachverhalt',
  'Zinssperre',
  'Beleglink',
  ...Array.from({ length: 8 }, (_, i) => [`Beleginfo - Art ${i + 1}`, `Beleginfo - Inhalt ${i + 1}`]).flat(),
  'KOST1 - Kostenstelle',
  'KOST2 - Kostenstelle',
  'Kost-Menge',
  'EU-Land u. UStID (Bestimmung)',
  'EU-Steuersatz (Bestimmung)',
  'Abw. Versteuerungsart',
  'Sachverhalt L+L',
  'Funktionsergänzung L+L',
  'BU 49 Hauptfunktionstyp',
  'BU 49 Hauptfunktionsnummer',
  'BU 49 Funktionsergänzung',
  ...Array.from({ length: 20 }, (_, i) => [`Zusatzinformation - Art ${i + 1}`, `Zusatzinformation- Inhalt ${i + 1}`]).flat(),
  'Stück',
  'Gewicht',
  'Zahlweise',
  'Forderungsart',
  'Veranlagungsjahr',
  'Zugeordnete Fälligkeit',
  'Skontotyp',
  'Auftragsnummer',
  'Buchungstyp',
  'USt-Schlüssel (Anzahlungen)',
  'EU-Land (Anzahlungen)',
  'Sachverhalt L+L (Anzahlungen)',
  'EU-Steuersatz (Anzahlungen)',
  'Erlöskonto (Anzahlungen)',
  'Herkunft-Kz',
  'Buchungs GUID',
  'KOST-Datum',
  'SEPA-Mandatsreferenz',
  'Skontosperre',
  'Gesellschaftername',
  'Beteiligtennummer',
  'Identifikationsnummer',
  'Zeichnernummer',
  'Postensperre bis',
  'Bezeichnung SoBil-Sachverhalt',
  'Kennzeichen SoBil-Buchung',
  'Festschreibung',
  'Leistungsdatum',
  'Datum Zuord. Steuerperiode',
  'Fälligkeit',
  'Generalumkehr (GU)',
  'Steuersatz',
  'Land',
  'Abrechnungsreferenz',
  'BVV-Position',
  'EU-Land u. UStID (Ursprung)',
  'EU-Steuersatz (Ursprung)',
  'Abw. Skontokonto',
] as const;

export const DATEV_HEADER_FIELD_COUNT = 31;

export interface DatevHeaderMeta {
  /** Beraternummer, 1001..9999999. */
  consultantNumber: number;
  /** Mandantennummer, 1..99999. */
  clientNumber: number;
  /** Wirtschaftsjahresbeginn, "YYYY-MM-DD". */
  fiscalYearStart: string;
  /** Sachkontenlänge, 4..8 (usually 4). */
  accountLength: number;
  /** Datum vom / bis of the batch, "YYYY-MM-DD", within one fiscal year. */
  periodFrom: string;
  periodTo: string;
  /** Bezeichnung of the batch, at most 30 characters. */
  label: string;
  /** Erzeugt am; written as local time in timeZone (default Europe/Berlin). */
  createdAt: Date;
  /** WKZ, ISO 4217; default EUR. */
  currency?: string;
  /** Sachkontenrahmen "03" / "04" (or empty). */
  skr?: string;
  /** Diktatkürzel, two letters. */
  initials?: string;
  /** Exportiert von (user name), at most 25 characters. */
  exportedBy?: string;
  /** Festschreibung: true locks the batch on import; default false so the advisor can review. */
  lock?: boolean;
  timeZone?: string;
}

export interface DatevBooking {
  /** Positive decimal string, at most 10 digits before the point ("1190.00"). */
  amount: string;
  debitCredit: 'S' | 'H';
  currency?: string;
  account: string;
  contraAccount: string;
  buKey?: string;
  /** "YYYY-MM-DD"; written as DDMM (the year comes from the header). */
  documentDate: string;
  /** Belegfeld 1 (invoice number), at most 36 of A-Z a-z 0-9 $ & % * + - / (others are removed). */
  documentField1?: string;
  /** Buchungstext, at most 60 characters. */
  text?: string;
  /** Leistungsdatum "YYYY-MM-DD" (optional). */
  serviceDate?: string;
}

/** Alias used by callers that stream rows: one DATEV booking line. */
export type Booking = DatevBooking;

const quote = (text: string) => `"${text.replace(/"/g, '""')}"`;

/** Text for a quoted field: no line breaks, tabs or other controls, at most `max` characters. */
const cleanText = (text: string, max: number) =>
  text
    // biome-ignore lint/suspicious/noControlCharactersInRegex: a control character would break DATEV's CSV record
    .replace(/[\u0000-\u001F\u007F]+/g, ' ')
    .trim()
    .slice(0, max);

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function parseIsoDate(value: string, field: string): { y: string; m: string; d: string } {
  const m = ISO_DATE.exec(value ?? '');
  const ok =
    m &&
    (() => {
      const dt = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
      return dt.getUTCFullYear() === Number(m[1]) && dt.getUTCMonth() === Number(m[2]) - 1 && dt.getUTCDate() === Number(m[3]);
    })();
  if (!m || !ok) throw taxReportError('INVALID_BOOKING', `${field} must be a date YYYY-MM-DD`, [{ field, message: `invalid date ${JSON.stringify(value)}` }]);
  return { y: m[1], m: m[2], d: m[3] };
}

const ymd = (value: string, field: string) => {
  const p = parseIsoDate(value, field);
  return `${p.y}${p.m}${p.d}`;
};

function intIn(value: number, min: number, max: number, field: string): string {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw taxReportError('INVALID_BOOKING', `${field} must be an integer from ${min} to ${max}`, [{ field, message: 'out of range' }]);
  }
  return String(value);
}

function createdStamp(at: Date, timeZone: string): string {
  const t = wallClockIn(timeZone, at);
  const ms = String(at.getUTCMilliseconds()).padStart(3, '0');
  return `${t.year}${t.month}${t.day}${t.hour}${t.minute}${t.second}${ms}`;
}

/** Line 1: the 31-field EXTF header (without line end). */
export function datevHeaderLine(meta: DatevHeaderMeta): string {
  const currency = meta.currency ?? 'EUR';
  if (!/^[A-Z]{3}$/.test(currency)) throw taxReportError('INVALID_BOOKING', 'currency must be an ISO 4217 code', [{ field: 'currency', message: 'invalid' }]);
  const wj = ymd(meta.fiscalYearStart, 'fiscalYearStart');
  const from = ymd(meta.periodFrom, 'periodFrom');
  const to = ymd(meta.periodTo, 'periodTo');
  // DATEV imports one batch into one fiscal year: from <= to, both inside [WJ-Beginn, +1 year).
  const wjStart = parseIsoDate(meta.fiscalYearStart, 'fiscalYearStart');
  const wjEnd = new Date(Date.UTC(Number(wjStart.y) + 1, Number(wjStart.m) - 1, Number(wjStart.d) - 1)).toISOString().slice(0, 10).replace(/-/g, '');
  if (from > to || from < wj || to > wjEnd) {
    throw taxReportError('INVALID_BOOKING', 'periodFrom..periodTo must lie inside one fiscal year starting at fiscalYearStart', [
      { field: 'periodFrom', message: `${from}..${to} outside ${wj}..${wjEnd}` },
    ]);
  }
  if (meta.initials !== undefined && !/^[A-Za-z]{0,2}$/.test(meta.initials)) {
    throw taxReportError('INVALID_BOOKING', 'initials (Diktatkürzel) must be up to two letters', [{ field: 'initials', message: 'invalid' }]);
  }
  if (meta.skr !== undefined && !/^(\d{2})?$/.test(meta.skr)) {
    throw taxReportError('INVALID_BOOKING', 'skr must be two digits such as "03"', [{ field: 'skr', message: 'invalid' }]);
  }
  const fields = [
    quote('EXTF'), // 1 Kennzeichen
    '700', // 2 Versionsnummer
    '21', // 3 Formatkategorie
    quote('Buchungsstapel'), // 4 Formatname
    '13', // 5 Formatversion
    createdStamp(meta.createdAt, meta.timeZone ?? 'Europe/Berlin'), // 6 Erzeugt am YYYYMMDDHHMMSSFFF
    '', // 7 Importiert (set by DATEV)
    quote('RE'), // 8 Herkunft
    quote(cleanText(meta.exportedBy ?? '', 25)), // 9 Exportiert von
    quote(''), // 10 Importiert von (set by DATEV)
    intIn(meta.consultantNumber, 1001, 9_999_999, 'consultantNumber'), // 11 Beraternummer
    intIn(meta.clientNumber, 1, 99_999, 'clientNumber'), // 12 Mandantennummer
    wj, // 13 WJ-Beginn
    intIn(meta.accountLength, 4, 8, 'accountLength'), // 14 Sachkontenlänge
    from, // 15 Datum vom
    to, // 16 Datum bis
    quote(cleanText(meta.label, 30)), // 17 Bezeichnung
    quote(meta.initials ?? ''), // 18 Diktatkürzel
    '1', // 19 Buchungstyp: 1 = Finanzbuchführung
    '0', // 20 Rechnungslegungszweck: 0 = unabhängig
    meta.lock ? '1' : '0', // 21 Festschreibung
    quote(currency), // 22 WKZ
    '', // 23 reserviert
    quote(''), // 24 Derivatskennzeichen
    '', // 25 reserviert
    '', // 26 reserviert
    quote(meta.skr ?? ''), // 27 Sachkontenrahmen
    '', // 28 ID der Branchenlösung
    '', // 29 reserviert
    quote(''), // 30 reserviert
    quote(''), // 31 Anwendungsinformation
  ];
  return fields.join(';');
}

/** Line 2: the 125 column headings (without line end). */
export function datevColumnHeaderLine(): string {
  return DATEV_COLUMNS.join(';');
}

const ACCOUNT_RE = /^[1-9]\d{0,8}$/;
/** A positive amount as DatevBooking takes it: integer digits, then up to two decimals. */
const AMOUNT_RE = /^(\d{1,10})(?:\.(\d{1,2}))?$/;
const BELEG1_DISALLOWED = /[^A-Za-z0-9$&%*+\-/]/g;
const COL = (name: (typeof DATEV_COLUMNS)[number]) => DATEV_COLUMNS.indexOf(name);
const I = {
  amount: COL('Umsatz (ohne Soll/Haben-Kz)'),
  side: COL('Soll/Haben-Kennzeichen'),
  currency: COL('WKZ Umsatz'),
  account: COL('Konto'),
  contra: COL('Gegenkonto (ohne BU-Schlüssel)'),
  bu: COL('BU-Schlüssel'),
  date: COL('Belegdatum'),
  beleg1: COL('Belegfeld 1'),
  text: COL('Buchungstext'),
  serviceDate: COL('Leistungsdatum'),
};

/** One booking line with all 125 fields (without line end). */
export function datevBookingLine(b: DatevBooking): string {
  const amount = datevAmountField(b.amount);
  const posting = datevPostingFields(b);
  const date = parseIsoDate(b.documentDate, 'documentDate');
  let serviceDate = '';
  if (b.serviceDate) {
    const s = parseIsoDate(b.serviceDate, 'serviceDate');
    serviceDate = `${s.d}${s.m}${s.y}`;
  }
  return amount + posting + datevDocumentFields(`${date.d}${date.m}`, b.documentField1, b.text, serviceDate);
}

/**
 * Umsatz: a positive decimal string ("1190.00", "5.5") as DATEV's decimal comma ("1190,00").
 * Formatted from the validated string itself (exact: no decimal.js).
 */
export function datevAmountField(value: string): string {
  const amount = AMOUNT_RE.exec(value ?? '');
  if (!amount || /^[0.]*$/.test(value)) {
    throw taxReportError('INVALID_BOOKING', `amount must be a positive decimal with at most 10 integer digits, got ${JSON.stringify(value)}`, [
      { field: 'amount', message: 'positive, non-zero, at most 2 decimals' },
    ]);
  }
  return `${amount[1].replace(/^0+(?=\d)/, '')},${(amount[2] ?? '').padEnd(2, '0')}`;
}

/**
 * The part of a booking line that depends on its posting only: from the separator after Umsatz
 * through the one after BU-Schlüssel (S/H, WKZ, Konto, Gegenkonto, BU-Schlüssel), validated. The
 * export builds it once per distinct posting, not per row (datev.ts).
 */
export function datevPostingFields(b: Pick<DatevBooking, 'debitCredit' | 'currency' | 'account' | 'contraAccount' | 'buKey'>): string {
  if (b.debitCredit !== 'S' && b.debitCredit !== 'H')
    throw taxReportError('INVALID_BOOKING', 'debitCredit must be S or H', [{ field: 'debitCredit', message: 'S or H' }]);
  for (const [field, value] of [
    ['account', b.account],
    ['contraAccount', b.contraAccount],
  ] as const) {
    if (!ACCOUNT_RE.test(value ?? ''))
      throw taxReportError('INVALID_BOOKING', `${field} must be a DATEV account number`, [{ field, message: `invalid ${JSON.stringify(value)}` }]);
  }
  if (b.buKey !== undefined && b.buKey !== '' && !/^\d{1,4}$/.test(b.buKey)) {
    throw taxReportError('INVALID_BOOKING', 'buKey must be 1-4 digits', [{ field: 'buKey', message: 'invalid' }]);
  }
  const currency = b.currency ?? 'EUR';
  if (!/^[A-Z]{3}$/.test(currency)) throw taxReportError('INVALID_BOOKING', 'currency must be an ISO 4217 code', [{ field: 'currency', message: 'invalid' }]);
  return (
    GAP[0] + quote(b.debitCredit) + GAP[1] + quote(currency) + GAP[2] + b.account + GAP[3] + b.contraAccount + GAP[4] + (b.buKey ? quote(b.buKey) : '') + GAP[5]
  );
}

/**
 * The rest of a booking line after datevPostingFields: Belegdatum (DDMM, already formatted),
 * Belegfeld 1 and Buchungstext (cleaned and quoted here), Leistungsdatum (DDMMYYYY or empty,
 * already formatted), and the empty columns up to the 125th.
 */
export function datevDocumentFields(ddmm: string, documentField1: string | null | undefined, text: string | null | undefined, serviceDate: string): string {
  const b = documentField1 ?? '';
  const t = text ?? '';
  // Most values need no change: one test each instead of the replace, trim and slice passes
  // (the same result; the export calls this once per row).
  const beleg = BELEG1_AS_IS.test(b) ? `"${b}"` : quote(b.replace(BELEG1_DISALLOWED, '').slice(-36));
  const quoted = t.length <= 60 && TEXT_AS_IS.test(t) && t.trim() === t ? `"${t}"` : quote(cleanText(t, 60));
  return ddmm + GAP[6] + beleg + GAP[7] + quoted + GAP[8] + serviceDate + GAP[9];
}

/** A Belegfeld 1 that datevDocumentFields writes as it is (allowed characters only, at most 36). */
const BELEG1_AS_IS = /^[A-Za-z0-9$&%*+\-/]{0,36}$/;
/** A Buchungstext without what cleanText replaces or quote escapes. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the characters cleanText replaces
const TEXT_AS_IS = /^[^\u0000-\u001F\u007F"]*$/;

/**
 * The columns a booking line fills, in column order (amount, posting fields, document fields
 * above), and after each the separators up to the next one (the last: up to the 125th column). A
 * line is these ten values and separators: the same text as the 125 fields joined with ";",
 * without building 125 fields per row (the export's hottest path).
 */
const FILLED = [I.amount, I.side, I.currency, I.account, I.contra, I.bu, I.date, I.beleg1, I.text, I.serviceDate];
const GAP = FILLED.map((col, k) => ';'.repeat((FILLED[k + 1] ?? DATEV_COLUMNS.length - 1) - col));
if (FILLED.some((col, k) => k > 0 && col <= FILLED[k - 1])) throw new Error('DATEV booking columns out of order');

export const CRLF = '\r\n';
/** Lines per chunk: big enough to amortise encoding, small enough to keep memory flat. */
const LINES_PER_CHUNK = 256;

/**
 * Text outside what Windows-1252 and Latin-1 encode alike: 0x80-0x9F (the two differ there) and
 * anything above 0xFF. Without any, Latin-1 (native, one pass) gives Windows-1252's bytes; the
 * rare chunk with €, „ or a character it lacks goes through iconv-lite.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the range starts at U+0000 on purpose
const NOT_LATIN1_ALIKE = /[^\x00-\x7F\xA0-\xFF]/;
export const encodeWindows1252 = (text: string): Buffer => (NOT_LATIN1_ALIKE.test(text) ? iconv.encode(text, 'windows-1252') : Buffer.from(text, 'latin1'));

/**
 * The whole file as a byte stream. Bookings are pulled from the iterable only as fast as the
 * consumer reads (Readable.from respects backpressure), so memory stays bounded whatever the
 * number of rows. Characters Windows-1252 cannot hold become "?" (iconv-lite's replacement).
 * The iterable may give bookings one by one or in batches (arrays).
 */
export function datevCsvStream(
  meta: DatevHeaderMeta,
  bookings: AsyncIterable<DatevBooking | DatevBooking[]> | Iterable<DatevBooking | DatevBooking[]>,
): Readable {
  async function* lines(): AsyncGenerator<string> {
    let batch = '';
    let n = 0;
    for await (const item of bookings) {
      for (const b of Array.isArray(item) ? item : [item]) {
        batch += datevBookingLine(b) + CRLF;
        if (++n === LINES_PER_CHUNK) {
          yield batch;
          batch = '';
          n = 0;
        }
      }
    }
    if (batch) yield batch;
  }
  return datevCsvTextStream(meta, lines());
}

/**
 * The file from booking lines already written (datevBookingLine's text, each followed by CRLF),
 * in chunks of any number of lines, as text or already encoded (encodeWindows1252): the header,
 * then each chunk as it comes, pulled only as fast as the consumer reads. The export's path
 * (datevExportChunks in datev.ts gives bytes).
 */
export function datevCsvTextStream(meta: DatevHeaderMeta, chunks: AsyncIterable<string | Buffer>): Readable {
  // Validate the header before the stream exists, so a bad request fails fast, not mid-download.
  const header = datevHeaderLine(meta) + CRLF + datevColumnHeaderLine() + CRLF;
  async function* bytes(): AsyncGenerator<Buffer> {
    yield encodeWindows1252(header);
    for await (const chunk of chunks) if (chunk.length) yield typeof chunk === 'string' ? encodeWindows1252(chunk) : chunk;
  }
  return Readable.from(bytes(), { objectMode: false, highWaterMark: 64 * 1024 });
}
