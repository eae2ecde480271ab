import { describe, expect, it } from 'vitest';
import iconv from 'iconv-lite';
import {
  DATEV_COLUMNS,
  datevBookingLine,
  datevColumnHeaderLine,
  datevCsvStream,
  datevHeaderLine,
  encodeWindows1252,
  type DatevBooking,
  type DatevHeaderMeta,
} from '../../../shared/formats/datev/extfBuchungsstapel';
import { datevPosting, datevSkrCode } from '../../../shared/domain/tax/datevMapping';
import { taxReportReason } from '../../../shared/domain/tax/errors';

/** Minimal RFC-4180-style parser for one line with ";" and "" escapes: returns raw cells and whether each was quoted. */
function parseLine(line: string): Array<{ value: string; quoted: boolean }> {
  const cells: Array<{ value: string; quoted: boolean }> = [];
  let i = 0;
  for (;;) {
    if (line[i] === '"') {
      let v = '';
      i++;
      for (;;) {
        if (line[i] === '"' && line[i + 1] === '"') {
          v += '"';
          i += 2;
        } else if (line[i] === '"') {
          i++;
          break;
        } else if (i >= line.length) {
          throw new Error('unclosed quote');
        } else v += line[i++];
      }
      cells.push({ value: v, quoted: true });
    } else {
      const end = line.indexOf(';', i);
      cells.push({ value: end === -1 ? line.slice(i) : line.slice(i, end), quoted: false });
      i = end === -1 ? line.length : end;
    }
    if (i >= line.length) return cells;
    if (line[i] !== ';') throw new Error(`expected ; at ${i}`);
    i++;
  }
}

const meta: DatevHeaderMeta = {
  consultantNumber: 29098,
  clientNumber: 55003,
  fiscalYearStart: '2026-01-01',
  accountLength: 4,
  periodFrom: '2026-03-01',
  periodTo: '2026-03-31',
  label: 'Buchungen März 2026',
  createdAt: new Date('2026-04-01T12:34:56.789Z'), // 14:34:56.789 in Berlin (CEST)
  currency: 'EUR',
  skr: '03',
  initials: 'WD',
};

const booking: DatevBooking = {
  amount: '1190.00',
  debitCredit: 'S',
  currency: 'EUR',
  account: '1410',
  contraAccount: '8400',
  documentDate: '2026-03-05',
  documentField1: 'RE-2026-00001',
  text: 'Rechnung "Müller"; Beratung',
};

describe('DATEV EXTF header and columns', () => {
  it('header has the 31 fields of format 700/21/13 with the right values', () => {
    const cells = parseLine(datevHeaderLine(meta));
    expect(cells).toHaveLength(31);
    const v = cells.map((c) => c.value);
    expect(v[0]).toBe('EXTF');
    expect(cells[0].quoted).toBe(true);
    expect(v[1]).toBe('700');
    expect(v[2]).toBe('21');
    expect(v[3]).toBe('Buchungsstapel');
    expect(v[4]).toBe('13');
    expect(v[5]).toBe('20260401143456789');
    expect(v[5]).toMatch(/^20\d{15}$/);
    expect(v[6]).toBe('');
    expect(v[7]).toBe('RE');
    expect(v[10]).toBe('29098');
    expect(v[11]).toBe('55003');
    expect(v[12]).toBe('20260101');
    expect(v[13]).toBe('4');
    expect(v[14]).toBe('20260301');
    expect(v[15]).toBe('20260331');
    expect(v[16]).toBe('Buchungen März 2026');
    expect(v[17]).toBe('WD');
    expect(v[18]).toBe('1'); // Buchungstyp Fibu
    expect(v[19]).toBe('0');
    expect(v[20]).toBe('0'); // not locked
    expect(v[21]).toBe('EUR');
    expect(v[26]).toBe('03');
    // Text fields DATEV writes quoted
    for (const i of [1, 4, 8, 9, 10, 17, 18, 22, 27, 31]) expect(cells[i - 1].quoted, `field ${i}`).toBe(true);
    for (const i of [2, 3, 5, 6, 11, 12, 13, 14, 15, 16]) expect(cells[i - 1].quoted, `field ${i}`).toBe(false);
  });

  it('refuses a batch that leaves the fiscal year or bad numbers', () => {
    expect(() => datevHeaderLine({ ...meta, periodTo: '2027-01-01' })).toThrow(/fiscal year/);
    expect(() => datevHeaderLine({ ...meta, periodFrom: '2025-12-31' })).toThrow(/fiscal year/);
    expect(() => datevHeaderLine({ ...meta, consultantNumber: 1000 })).toThrow(/consultantNumber/);
    expect(() => datevHeaderLine({ ...meta, accountLength: 9 })).toThrow(/accountLength/);
    // An offset fiscal year (July..June) is fine across the calendar year end.
    expect(() => datevHeaderLine({ ...meta, fiscalYearStart: '2025-07-01', periodFrom: '2026-01-01', periodTo: '2026-06-30' })).not.toThrow();
  });

  it('column header lists the 125 columns of format version 13 in order', () => {
    const cells = datevColumnHeaderLine().split(';');
    expect(cells).toHaveLength(125);
    expect(DATEV_COLUMNS).toHaveLength(125);
    expect(cells[0]).toBe('Umsatz (ohne Soll/Haben-Kz)');
    expect(cells[6]).toBe('Konto');
    expect(cells[7]).toBe('Gegenkonto (ohne BU-Schlüssel)');
    expect(cells[9]).toBe('Belegdatum');
    expect(cells[13]).toBe('Buchungstext');
    expect(cells[113]).toBe('Festschreibung');
    expect(cells[114]).toBe('Leistungsdatum');
    expect(cells[124]).toBe('Abw. Skontokonto');
  });
});

describe('DATEV booking line', () => {
  it('puts every value in its column, quotes text and doubles inner quotes, uses a decimal comma', () => {
    const line = datevBookingLine({ ...booking, buKey: '9', serviceDate: '2026-03-04' });
    const cells = parseLine(line);
    expect(cells).toHaveLength(125);
    expect(cells[0]).toEqual({ value: '1190,00', quoted: false });
    expect(cells[1]).toEqual({ value: 'S', quoted: true });
    expect(cells[2]).toEqual({ value: 'EUR', quoted: true });
    expect(cells[6]).toEqual({ value: '1410', quoted: false });
    expect(cells[7]).toEqual({ value: '8400', quoted: false });
    expect(cells[8]).toEqual({ value: '9', quoted: true });
    expect(cells[9]).toEqual({ value: '0503', quoted: false }); // DDMM
    expect(cells[10]).toEqual({ value: 'RE-2026-00001', quoted: true });
    expect(cells[13]).toEqual({ value: 'Rechnung "Müller"; Beratung', quoted: true });
    expect(cells[114]).toEqual({ value: '04032026', quoted: false }); // Leistungsdatum DDMMYYYY
    expect(line).toContain('"Rechnung ""Müller""; Beratung"');
    const filled = new Set([0, 1, 2, 6, 7, 8, 9, 10, 13, 114]);
    cells.forEach((c, i) => {
      if (!filled.has(i)) expect(c.value, `column ${i + 1}`).toBe('');
    });
    expect(line).not.toMatch(/[\r\n]/);
  });

  it('formats amounts without thousands separators and cleans Belegfeld 1 and Buchungstext', () => {
    const cells = parseLine(
      datevBookingLine({
        ...booking,
        amount: '1234567.5',
        documentField1: 'INV #2026/0001 (copy)_x',
        text: `Zeile1\r\nZeile2\t${'x'.repeat(80)}`,
        buKey: undefined,
      }),
    );
    expect(cells[0].value).toBe('1234567,50');
    // the amount is formatted from its string (exactly as decimal's toFixed(2) would)
    for (const [amount, field] of [
      ['1', '1,00'],
      ['0.5', '0,50'],
      ['0001.05', '1,05'],
      ['1234567890.99', '1234567890,99'],
      ['10', '10,00'],
    ]) {
      expect(parseLine(datevBookingLine({ ...booking, amount }))[0].value, amount).toBe(field);
    }
    expect(cells[8]).toEqual({ value: '', quoted: false });
    expect(cells[10].value).toBe('INV2026/0001copyx');
    expect(cells[13].value).toHaveLength(60);
    expect(cells[13].value.startsWith('Zeile1 Zeile2 xxx')).toBe(true);
  });

  it('writes Belegfeld 1 and Buchungstext as they are only when cleaning would not change them', () => {
    const cells = (documentField1: string, text: string) => {
      const c = parseLine(datevBookingLine({ ...booking, documentField1, text }));
      return [c[10].value, c[13].value];
    };
    expect(cells('RE-2026/1', 'Müller GmbH')).toEqual(['RE-2026/1', 'Müller GmbH']);
    expect(cells('RE 2026_1', ' padded\u00A0')).toEqual(['RE20261', 'padded']);
    expect(cells('A'.repeat(40), 'x'.repeat(61))).toEqual(['A'.repeat(36), 'x'.repeat(60)]);
    expect(cells('B'.repeat(36), 'y'.repeat(60))).toEqual(['B'.repeat(36), 'y'.repeat(60)]);
    expect(cells('', 'a\tb "c"')).toEqual(['', 'a b "c"']);
    expect(cells('1', '\u2028x')).toEqual(['1', 'x']);
  });

  it('refuses amounts DATEV rejects and bad accounts or dates', () => {
    for (const amount of ['0.00', '0', '000.0', '-1.00', '1,00', '12345678901.00', '1.005', '1.', '.5', '']) {
      expect(() => datevBookingLine({ ...booking, amount }), amount).toThrow(/amount/);
    }
    expect(() => datevBookingLine({ ...booking, account: '01200' })).toThrow(/account/);
    expect(() => datevBookingLine({ ...booking, documentDate: '2026-02-30' })).toThrow(/documentDate/);
    expect(() => datevBookingLine({ ...booking, debitCredit: 'X' as 'S' })).toThrow(/S or H/);
  });
});

describe('DATEV stream', () => {
  it('encodes windows-1252 with CRLF line ends', async () => {
    const chunks: Buffer[] = [];
    const stream = datevCsvStream(meta, [{ ...booking, text: 'Müller ÄÖÜß „€“ 中' }]);
    for await (const c of stream) chunks.push(c as Buffer);
    const bytes = Buffer.concat(chunks);
    // ü Ä Ö Ü ß in windows-1252; „ € “ are 0x84 0x80 0x93 there; 中 is not representable -> "?"
    expect(bytes.includes(Buffer.from([0x4d, 0xfc, 0x6c, 0x6c, 0x65, 0x72, 0x20, 0xc4, 0xd6, 0xdc, 0xdf, 0x20, 0x84, 0x80, 0x93, 0x20, 0x3f]))).toBe(true);
    expect(bytes.includes(Buffer.from('Ã¼', 'latin1'))).toBe(false); // not UTF-8
    expect(bytes.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf]))).toBe(false); // no BOM
    const text = iconv.decode(bytes, 'windows-1252');
    const lines = text.split('\r\n');
    expect(lines).toHaveLength(4); // header, columns, 1 booking, trailing empty after the last CRLF
    expect(lines[3]).toBe('');
    expect(text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    expect(parseLine(lines[0])).toHaveLength(31);
    expect(lines[1].split(';')).toHaveLength(125);
    expect(parseLine(lines[2])[13].value).toBe('Müller ÄÖÜß „€“ ?');
  });

  it('encodes every character as iconv-lite does, Latin-1 where Windows-1252 agrees', () => {
    const all = `${Array.from({ length: 0xd800 }, (_, c) => String.fromCharCode(c)).join('')}\u{1F600}`;
    // Per character (either path for each) and as one text (iconv-lite for all of it).
    for (let c = 0; c < 0x800; c++)
      expect(encodeWindows1252(String.fromCharCode(c)).equals(iconv.encode(String.fromCharCode(c), 'windows-1252')), `U+${c.toString(16)}`).toBe(true);
    expect(encodeWindows1252(all).equals(iconv.encode(all, 'windows-1252'))).toBe(true);
    const latin = 'Grüße, Müller & Söhne; "Ölmühle" ©½ÿ';
    expect(encodeWindows1252(latin).equals(iconv.encode(latin, 'windows-1252'))).toBe(true);
  });

  it('streams 100k bookings from an async generator with bounded buffering', async () => {
    const total = 100_000;
    let produced = 0;
    let consumedLines = 0;
    let maxLag = 0;
    async function* bookings(): AsyncGenerator<DatevBooking> {
      for (let i = 0; i < total; i++) {
        produced++;
        maxLag = Math.max(maxLag, produced - consumedLines);
        yield { ...booking, amount: `${(i % 9999) + 1}.${String(i % 100).padStart(2, '0')}`, documentField1: `RE-2026-${i}` };
      }
    }
    let bytes = 0;
    let lastByte = 0;
    for await (const chunk of datevCsvStream(meta, bookings())) {
      const buf = chunk as Buffer;
      bytes += buf.length;
      for (let j = 0; j < buf.length; j++) if (buf[j] === 0x0a) consumedLines++;
      lastByte = buf[buf.length - 1];
    }
    expect(produced).toBe(total);
    expect(consumedLines).toBe(total + 2);
    expect(lastByte).toBe(0x0a);
    expect(bytes).toBeGreaterThan(total * 125);
    // The generator is never far ahead of the consumer: backpressure keeps a few chunks in flight,
    // not the file (a fully buffered export would show a lag of ~100k lines).
    expect(maxLag).toBeLessThan(10_000);
  });
});

describe('DATEV account mapping', () => {
  it('SKR03: revenue on automatic accounts without a key, expenses with the input-tax key', () => {
    expect(datevPosting('SKR03', { kind: 'salesInvoice', taxRate: '19', gross: '1190.00' })).toEqual({
      amount: '1190.00',
      debitCredit: 'S',
      account: '1410',
      contraAccount: '8400',
    });
    expect(datevPosting('SKR03', { kind: 'salesInvoice', taxRate: '7', gross: '107.00', debtorAccount: '10001' })).toEqual({
      amount: '107.00',
      debitCredit: 'S',
      account: '10001',
      contraAccount: '8300',
    });
    // Credit note: negative gross flips to H
    expect(datevPosting('SKR03', { kind: 'salesInvoice', taxRate: '19', gross: '-119.00' })).toMatchObject({ amount: '119.00', debitCredit: 'H' });
    expect(datevPosting('SKR03', { kind: 'salesInvoice', taxRate: '0', gross: '500.00', zeroRateKind: 'reverseChargeEu' })).toMatchObject({
      contraAccount: '8336',
    });
    expect(datevPosting('SKR03', { kind: 'salesInvoice', taxRate: '19', gross: '119.00', revenueAccount: '8200' })).toMatchObject({
      contraAccount: '8200',
      buKey: '3',
    });
    expect(datevPosting('SKR03', { kind: 'incomingInvoice', taxRate: '19', gross: '238.00' })).toEqual({
      amount: '238.00',
      debitCredit: 'H',
      account: '1610',
      contraAccount: '4900',
      buKey: '9',
    });
    expect(datevPosting('SKR03', { kind: 'incomingInvoice', taxRate: '7', gross: '10.70', expenseAccount: '4930' })).toMatchObject({
      contraAccount: '4930',
      buKey: '8',
    });
    expect(datevPosting('SKR03', { kind: 'payment', of: 'salesInvoice', amount: '1190.00' })).toEqual({
      amount: '1190.00',
      debitCredit: 'S',
      account: '1200',
      contraAccount: '1410',
    });
    expect(datevPosting('SKR03', { kind: 'payment', of: 'incomingInvoice', amount: '238.00' })).toMatchObject({
      debitCredit: 'H',
      account: '1200',
      contraAccount: '1610',
    });
    expect(datevPosting('SKR03', { kind: 'salesInvoice', taxRate: '19', gross: '0.00' })).toBeNull();
  });

  it('SKR04 and the Austrian EKR', () => {
    expect(datevPosting('SKR04', { kind: 'salesInvoice', taxRate: '19', gross: '119.00' })).toMatchObject({ account: '1210', contraAccount: '4400' });
    expect(datevPosting('SKR04', { kind: 'incomingInvoice', taxRate: '19', gross: '119.00' })).toMatchObject({
      account: '3310',
      contraAccount: '6300',
      buKey: '9',
    });
    expect(datevPosting('SKR04', { kind: 'payment', of: 'salesInvoice', amount: '1.00' })).toMatchObject({ account: '1800' });
    expect(datevPosting('EKR', { kind: 'salesInvoice', taxRate: '20', gross: '120.00' })).toEqual({
      amount: '120.00',
      debitCredit: 'S',
      account: '2000',
      contraAccount: '4000',
      buKey: '3',
    });
    expect(datevPosting('EKR', { kind: 'salesInvoice', taxRate: '10', gross: '110.00' })).toMatchObject({ contraAccount: '4010', buKey: '2' });
    expect(datevPosting('EKR', { kind: 'salesInvoice', taxRate: '13', gross: '113.00' })).toMatchObject({ contraAccount: '4013', buKey: '4' });
    expect(datevPosting('EKR', { kind: 'incomingInvoice', taxRate: '13', gross: '113.00' })).toMatchObject({ account: '3300', buKey: '6' });
    expect(datevSkrCode('SKR04')).toBe('04');
    expect(datevSkrCode('EKR')).toBe('');
  });

  it("a payment provider's money: the ledger's clearing account instead of the bank, a refund flips", () => {
    // Ledger (docs/ledger.md): Stripe payment 10.00 = 7890 D / 2891 C; refund 4.00 = 2891 D / 7890 C.
    expect(datevPosting('EKR', { kind: 'payment', of: 'incomingInvoice', amount: '10.00', clearingAccount: '2891' })).toEqual({
      amount: '10.00',
      debitCredit: 'H',
      account: '2891',
      contraAccount: '3300',
    });
    expect(datevPosting('EKR', { kind: 'payment', of: 'incomingInvoice', amount: '-4.00', clearingAccount: '2891' })).toEqual({
      amount: '4.00',
      debitCredit: 'S',
      account: '2891',
      contraAccount: '3300',
    });
    expect(datevPosting('EKR', { kind: 'payment', of: 'incomingInvoice', amount: '10.00' })).toMatchObject({ account: '2800' });
    expect(() => datevPosting('EKR', { kind: 'payment', of: 'incomingInvoice', amount: '1.00', clearingAccount: '0289' })).toThrow(/clearingAccount/);
  });

  it('refuses rates the chart does not have', () => {
    try {
      datevPosting('SKR03', { kind: 'salesInvoice', taxRate: '20', gross: '120.00' });
      expect.unreachable();
    } catch (err) {
      expect(taxReportReason(err)).toBe('UNSUPPORTED_TAX_RATE');
    }
    expect(() => datevPosting('EKR', { kind: 'incomingInvoice', taxRate: '19', gross: '1.00' })).toThrow(/not mapped/);
  });

  it('mapping output feeds the line writer', () => {
    const p = datevPosting('SKR03', { kind: 'incomingInvoice', taxRate: '19', gross: '-59.50' })!;
    const cells = parseLine(datevBookingLine({ ...p, documentDate: '2026-03-31', documentField1: 'GS-1', text: 'Erstattung' }));
    expect(cells[0].value).toBe('59,50');
    expect(cells[1].value).toBe('S');
    expect(cells[6].value).toBe('1610');
    expect(cells[7].value).toBe('4900');
    expect(cells[8].value).toBe('9');
    expect(cells[9].value).toBe('3103');
  });
});
