import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asLegacy2013, ELSTER_LEGACY_FILE, ELSTER_LEGACY_XSD } from '../../helpers/elsterLegacy';
import iconv from 'iconv-lite';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { validateXml } from '../../helpers/xmllint';
import { needsOfficialFiles, schemaPath } from '../../helpers/officialFiles';
import { startWorkers, type RunningWorkers } from '../../../workers/worker';
import { austrianBook, germanBook, smallAustrianBook } from './books';
import { db } from '../../../shared/db';

const official = needsOfficialFiles([
  'schemas:u30-finanzonline/BMF_ERKLAERUNGS_UEBERMITTLUNG_U30_01_2022.xsd',
  'schemas:u30-finanzonline/BMF_ERKLAERUNGS_UEBERMITTLUNG_U30_07_2026.xsd',
  ELSTER_LEGACY_FILE,
]);

/**
 * Reports over fixture books built through the invoice commands (books.ts), checked against
 * answers worked out by hand below. Real HTTP, real PostgreSQL, real reports worker for the PDFs.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;
let workers: RunningWorkers;
let at: Awaited<ReturnType<typeof austrianBook>>;
let de: Awaited<ReturnType<typeof germanBook>>;
let atHttp: TestClient;
let deHttp: TestClient;

beforeAll(async () => {
  server = await startTestServer();
  workers = await startWorkers({ queues: ['reports'], schedule: false });
  [at, de] = await Promise.all([austrianBook(), germanBook()]);
  atHttp = client(server.url, { token: at.viewer.token });
  deHttp = client(server.url, { token: de.viewer.token });
});
afterAll(async () => {
  await workers?.close();
  await server?.close();
});

/** DATEV CSV → lines of fields (text fields unquoted). */
function parseDatev(raw: Buffer): string[][] {
  const text = iconv.decode(raw, 'windows-1252');
  expect(text.endsWith('\r\n')).toBe(true);
  return text
    .slice(0, -2)
    .split('\r\n')
    .map((line) => {
      const out: string[] = [];
      let cur = '';
      let quoted = false;
      for (let i = 0; i < line.length; i++) {
        const c = line[i];
        if (quoted) {
          if (c === '"' && line[i + 1] === '"') {
            cur += '"';
            i++;
          } else if (c === '"') quoted = false;
          else cur += c;
        } else if (c === '"') quoted = true;
        else if (c === ';') {
          out.push(cur);
          cur = '';
        } else cur += c;
      }
      out.push(cur);
      return out;
    });
}
const bookingKey = (f: string[]) => [f[0], f[1], f[6], f[7], f[8]].join('|');

describe('GET /api/reports/ust (U30)', () => {
  it('March 2026: every Kennzahl to the cent', async () => {
    const res = await atHttp.get('/api/reports/ust?year=2026&month=3');
    expect(res.status).toBe(200);
    // 20 %: R1 1000.00 + R5 400.00 − its credit note 400.00 − G1 100.00 = 900.00 → tax 180.00
    // 10 %: R1 3 × 33.33 = 99.99 + R6 300.00 (cancelled in April: still March turnover) = 399.99 → tax 39.999 = 40.00
    // 13 %: R1 250.00 → tax 32.50;  0 %: R2 1500.00 to a DE VAT ID → KZ 021
    // Out: R3 (Feb), R4 (Apr), the draft, R6's credit note (Apr), R7 (Jul).
    // 000 = 900.00 + 399.99 + 250.00 + 1500.00 = 3049.99
    // 060: E1 100.00 + E2 (20.00 + 13.00) = 133.00 (E3 is April, E4 storniert)
    // 095 = 180.00 + 40.00 + 32.50 − 133.00 = 119.50
    expect(res.body.form).toBe('U30');
    expect(res.body.period).toMatchObject({ kind: 'month', year: 2026, month: 3, start: '2026-03-01', end: '2026-03-31', label: '2026-03' });
    expect(res.body.kennzahlen).toEqual({
      '000': '3049.99',
      '011': '0.00',
      '017': '0.00',
      '021': '1500.00',
      '022': '900.00',
      '029': '399.99',
      '006': '250.00',
      '060': '133.00',
      '095': '119.50',
    });
    expect(res.body.salesByRate).toEqual([
      { taxRate: '20', net: '900.00', tax: '180.00' },
      { taxRate: '13', net: '250.00', tax: '32.50' },
      { taxRate: '10', net: '399.99', tax: '40.00' },
      { taxRate: '0', net: '1500.00', tax: '0.00' },
    ]);
    expect(res.body.inputTax).toBe('133.00');
    expect(res.body.payable).toBe('119.50');
    expect(res.body.unclassifiedZeroRatedNet).toBe('0.00');
  });

  it('Q1 2026 adds February (R3 999.00 @ 20 %)', async () => {
    const res = await atHttp.get('/api/reports/ust?year=2026&quarter=1');
    expect(res.status).toBe(200);
    // 20 %: 900.00 + 999.00 = 1899.00 → 379.80; 095 = 379.80 + 40.00 + 32.50 − 133.00 = 319.30
    expect(res.body.period).toMatchObject({ kind: 'quarter', quarter: 1, start: '2026-01-01', end: '2026-03-31', label: '2026-Q1' });
    expect(res.body.kennzahlen).toMatchObject({
      '000': '4048.99',
      '021': '1500.00',
      '022': '1899.00',
      '029': '399.99',
      '006': '250.00',
      '060': '133.00',
      '095': '319.30',
    });
  });

  it('April 2026: the credit note of a March invoice makes the 10 % base negative; JSON shows it, XML refuses it', async () => {
    const res = await atHttp.get('/api/reports/ust?year=2026&month=4');
    // 20 %: R4 777.00 → 155.40; 10 %: −300.00 (R6's credit note) → −30.00; 060: E3 200.00
    // 000 = 477.00; 095 = 155.40 − 30.00 − 200.00 = −74.60 (a credit)
    expect(res.body.kennzahlen).toMatchObject({ '000': '477.00', '022': '777.00', '029': '-300.00', '060': '200.00', '095': '-74.60' });
    const xml = await atHttp.get('/api/reports/ust?year=2026&month=4&format=xml');
    expect(xml.status).toBe(422);
    expect(xml.body.error.message).toMatch(/KZ 029 is negative/);
  });

  it.skipIf(!official)('xml: the FinanzOnline upload file, valid against the 01_2022 XSD, bases only', async () => {
    const res = await atHttp.get('/api/reports/ust?year=2026&month=3&format=xml');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/xml; charset=ISO-8859-1');
    const { valid, errors } = validateXml(res.raw, schemaPath('u30-finanzonline/BMF_ERKLAERUNGS_UEBERMITTLUNG_U30_01_2022.xsd'));
    expect(valid, errors).toBe(true);
    const xml = iconv.decode(res.raw, 'latin1');
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="iso-8859-1"\?>/);
    const kz = Object.fromEntries([...xml.matchAll(/<KZ(\d{3}) type="kz">([^<]+)</g)].map((m) => [m[1], m[2]]));
    expect(kz).toEqual({ '000': '3049.99', '021': '1500.00', '022': '900.00', '029': '399.99', '006': '250.00', '060': '133.00' });
    expect(xml).toContain('<ZRVON type="jahrmonat">2026-03</ZRVON>');
    expect(xml).toContain('<ZRBIS type="jahrmonat">2026-03</ZRBIS>');
    expect(xml).toContain('<FASTNR>123456789</FASTNR>');
    expect(xml).not.toContain('KZ095');
  });

  it.skipIf(!official)('xml via Accept header; a period from 2026-07 validates against the 07_2026 XSD', async () => {
    const res = await atHttp.get('/api/reports/ust?year=2026&quarter=3', { headers: { accept: 'application/xml' } });
    expect(res.status).toBe(200);
    const { valid, errors } = validateXml(res.raw, schemaPath('u30-finanzonline/BMF_ERKLAERUNGS_UEBERMITTLUNG_U30_07_2026.xsd'));
    expect(valid, errors).toBe(true);
    const xml = iconv.decode(res.raw, 'latin1');
    // R7 100.00 @ 20 % on 2026-07-15
    expect(xml).toContain('<KZ000 type="kz">100.00</KZ000>');
    expect(xml).toContain('<KZ022 type="kz">100.00</KZ022>');
    expect(xml).toContain('<ZRVON type="jahrmonat">2026-07</ZRVON>');
    expect(xml).toContain('<ZRBIS type="jahrmonat">2026-09</ZRBIS>');
  });

  it('xml needs the tax number (400) and an Austrian tenant (400 pointing to /api/reports/elster)', async () => {
    const noNumber = await createTeam({ country: 'AT', taxNumber: null });
    const res = await client(server.url, { token: noNumber.viewer.token }).get('/api/reports/ust?year=2026&month=3&format=xml');
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/tax number/);
    const deXml = await deHttp.get('/api/reports/ust?year=2026&month=3&format=xml');
    expect(deXml.status).toBe(400);
    expect(deXml.body.error.message).toContain('/api/reports/elster');
  });

  it('pdf: a U30 form rendered by the reports worker', async () => {
    const res = await atHttp.get('/api/reports/ust?year=2026&month=3&format=pdf');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.raw.subarray(0, 5).toString()).toBe('%PDF-');
    const { PDFParse } = await import('pdf-parse');
    const text = (await new PDFParse({ data: new Uint8Array(res.raw) }).getText()).text;
    expect(text).toContain('Umsatzsteuervoranmeldung (U30)');
    expect(text).toContain('März 2026');
    expect(text).toContain('3.049,99');
    expect(text).toContain('119,50');
    const byAccept = await atHttp.get('/api/reports/ust?year=2026&month=3', { headers: { accept: 'application/pdf' } });
    expect(byAccept.headers.get('content-type')).toBe('application/pdf');
  });

  it('German tenants get their UStVA figures as json', async () => {
    const res = await deHttp.get('/api/reports/ust?year=2026&month=3');
    expect(res.status).toBe(200);
    expect(res.body.form).toBe('UStVA');
    // 19 %: 1000.50 − 10.00 = 990.50 → Kz 81 = 990; 7 %: 100.50 → Kz 86 = 100; Kz 21 = 800
    // Kz 66 = 57.00; Kz 83 = 990 × 19 % + 100 × 7 % − 57.00 = 188.10 + 7.00 − 57.00 = 138.10
    expect(res.body.kennzahlen).toEqual({ '21': '800', '41': '0', '43': '0', '66': '57.00', '81': '990', '83': '138.10', '86': '100' });
  });

  it('invalid periods are 400 with details', async () => {
    for (const q of ['year=2026', 'year=2026&month=3&quarter=1', 'year=2026&month=13', 'year=1999&month=1', 'year=2026&month=3&format=docx']) {
      const res = await atHttp.get(`/api/reports/ust?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.error.details?.length, q).toBeGreaterThan(0);
    }
  });
});

describe('GET /api/reports/elster', () => {
  it.skipIf(!official)('UStVA XML (ISO-8859-15) with the hand-computed Kennzahlen, valid against the legacy ELSTER schema', async () => {
    const res = await deHttp.get('/api/reports/elster?year=2026&month=3');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/xml; charset=ISO-8859-15');
    const xml = iconv.decode(res.raw, 'iso-8859-15');
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="ISO-8859-15"/);
    expect(xml).toContain('<Anmeldungssteuern xmlns="http://finkonsens.de/elster/elsteranmeldung/ustva/v2026" version="2026">');
    expect(xml).toContain('<Jahr>2026</Jahr>');
    expect(xml).toContain('<Zeitraum>03</Zeitraum>');
    expect(xml).toContain('<Steuernummer>9198011310010</Steuernummer>');
    const kz = Object.fromEntries([...xml.matchAll(/<Kz(\d{2})>([^<]+)</g)].map((m) => [m[1], m[2]]));
    expect(kz).toEqual({ '21': '800', '66': '57.00', '81': '990', '83': '138.10', '86': '100' });
    // docs/tax-reports.md: map onto the 2013 schema (namespace/version, Jahr, element order, envelope) and validate.
    const { valid, errors } = validateXml(asLegacy2013(res.raw), ELSTER_LEGACY_XSD);
    expect(valid, errors).toBe(true);
  });

  it('quarters use Zeitraum 41..44; Austrian tenants get 400 explaining it is a German report', async () => {
    const q = await deHttp.get('/api/reports/elster?year=2026&quarter=1');
    expect(iconv.decode(q.raw, 'iso-8859-15')).toContain('<Zeitraum>41</Zeitraum>');
    const res = await atHttp.get('/api/reports/elster?year=2026&month=3');
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/German VAT return/);
  });
});

describe('GET /api/reports/datev', () => {
  it('AT (EKR): one row per invoice and rate, one per payment, windows-1252', async () => {
    const res = await atHttp.get('/api/reports/datev?year=2026&month=3');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=windows-1252');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="EXTF_Buchungsstapel_2026-03.csv"');
    const [header, columns, ...rows] = parseDatev(res.raw);
    expect(header[0]).toBe('EXTF');
    expect(header[10]).toBe('1001'); // Beraternummer default
    expect(header[11]).toBe('1'); // Mandantennummer default
    expect(header[14]).toBe('20260301');
    expect(header[15]).toBe('20260331');
    expect(columns).toHaveLength(125);
    expect(columns[0]).toBe('Umsatz (ohne Soll/Haben-Kz)');
    expect(rows.every((r) => r.length === 125)).toBe(true);
    // gross per rate: R1 1200.00 (20), 109.99 (10: 99.99 + 10.00), 282.50 (13); R2 1500.00 (0 %, RC → 4120);
    // R5 480.00 and its credit note 480.00 H; G1 120.00 H; R6 330.00 (10); E1 600.00 → 7600 (supplier account);
    // E2 220.00 (10, key 8) and 113.00 (13, key 6) → 7890 (the ledger's EKR default); payments R1 500, R2 1500, E1 600.
    expect(rows.map(bookingKey).sort()).toEqual(
      [
        '1200,00|S|2000|4000|3',
        '109,99|S|2000|4010|2',
        '282,50|S|2000|4013|4',
        '1500,00|S|2000|4120|',
        '480,00|S|2000|4000|3',
        '480,00|H|2000|4000|3',
        '120,00|H|2000|4000|3',
        '330,00|S|2000|4010|2',
        '600,00|H|3300|7600|9',
        '220,00|H|3300|7890|8',
        '113,00|H|3300|7890|6',
        '500,00|S|2800|2000|',
        '1500,00|S|2800|2000|',
        '600,00|H|2800|3300|',
      ].sort(),
    );
    const r1 = rows.find((r) => r[0] === '1200,00')!;
    expect(r1[9]).toBe('0103'); // Belegdatum DDMM
    expect(r1[10]).toMatch(/^RE-2026-\d+$/);
    expect(rows.find((r) => r[7] === '7600')![13]).toContain('Büro & Co');
    expect(rows.filter((r) => r[1] === 'S' || r[1] === 'H')).toHaveLength(14);
  });

  it('DE (SKR03 default): automatic revenue accounts without key, input tax key 9', async () => {
    const res = await deHttp.get('/api/reports/datev?year=2026&month=3');
    expect(res.status).toBe(200);
    const [header, , ...rows] = parseDatev(res.raw);
    expect(header[26]).toBe('03');
    // D1 19 %: 1000.50 + 190.10 (190.095 half-up) = 1190.60; 7 %: 100.50 + 7.04 (7.035) = 107.54
    expect(rows.map(bookingKey).sort()).toEqual(
      ['1190,60|S|1410|8400|', '107,54|S|1410|8300|', '11,90|H|1410|8400|', '800,00|S|1410|8336|', '357,00|H|1610|4900|9'].sort(),
    );
  });

  it('another tenant sees none of these rows; consultant/client numbers come from the settings', async () => {
    const other = await createTeam({ country: 'AT', settings: JSON.stringify({ datev: { consultantNumber: '4711', clientNumber: '42' } }) });
    const res = await client(server.url, { token: other.viewer.token }).get('/api/reports/datev?year=2026&month=3');
    const [header, columns, ...rows] = parseDatev(res.raw);
    expect([header[10], header[11]]).toEqual(['4711', '42']);
    expect(columns).toHaveLength(125);
    expect(rows).toHaveLength(0);
  });
});

describe('GET /api/reports/datev: checks before streaming', () => {
  it('a chart without an account for a rate in the period is 422 before any byte is sent', async () => {
    const team = await smallAustrianBook();
    await db()('tenants')
      .where({ id: team.tenant.id })
      .update({ settings: JSON.stringify({ datev: { chart: 'SKR03' } }) });
    const res = await client(server.url, { token: team.viewer.token }).get('/api/reports/datev?year=2026&month=3');
    expect(res.status).toBe(422);
    expect(res.body.error.message).toMatch(/20 % cannot be booked in SKR03/);
  });
});

describe('GET /api/reports/bwa', () => {
  it('months, cumulated and year with the prior year and the change in percent', async () => {
    const res = await atHttp.get('/api/reports/bwa?year=2026');
    expect(res.status).toBe(200);
    const b = res.body;
    expect(b).toMatchObject({ year: 2026, priorYear: 2025, chart: 'EKR' });
    const march = b.months[2];
    // Revenue March: R1 1349.99 + R2 1500.00 + R5 400.00 − 400.00 − G1 100.00 + R6 300.00 = 3049.99; 2025: 800.00
    // change 2249.99 = 281.24875 % → 281.2
    expect(march.revenue).toEqual({ current: '3049.99', prior: '800.00', change: '2249.99', changePercent: '281.2' });
    // Expenses March: 7600 (E1, supplier account) 500.00 vs 100.00 → +400.0 %; 7890, the ledger's EKR default (E2) 300.00 vs 0 → null
    expect(march.expenses).toEqual([
      { group: '7600 Büromaterial', account: '7600', name: 'Büromaterial', current: '500.00', prior: '100.00', change: '400.00', changePercent: '400.0' },
      {
        group: '7890 Übriger betrieblicher Aufwand',
        account: '7890',
        name: 'Übriger betrieblicher Aufwand',
        current: '300.00',
        prior: '0.00',
        change: '300.00',
        changePercent: null,
      },
    ]);
    expect(march.totalExpenses).toMatchObject({ current: '800.00', prior: '100.00' });
    expect(march.grossProfit).toMatchObject({ current: '3049.99', prior: '800.00' });
    // Result 2249.99 vs 700.00: 1549.99 / 700 = 221.427 % → 221.4
    expect(march.result).toEqual({ current: '2249.99', prior: '700.00', change: '1549.99', changePercent: '221.4' });
    // Cumulated to March: 999.00 + 3049.99 = 4048.99
    expect(march.cumulative.revenue).toMatchObject({ current: '4048.99', prior: '800.00' });
    expect(b.months[1].revenue).toEqual({ current: '999.00', prior: '0.00', change: '999.00', changePercent: null });
    // April: R4 777.00 − R6's credit note 300.00 = 477.00; E3 1000.00
    expect(b.months[3].revenue.current).toBe('477.00');
    expect(b.months[3].result.current).toBe('-523.00');
    // Year: 999.00 + 3049.99 + 477.00 + 100.00 (July) = 4625.99; expenses 1800.00; result 2825.99
    expect(b.total.revenue).toMatchObject({ current: '4625.99', prior: '800.00' });
    expect(b.total.totalExpenses).toMatchObject({ current: '1800.00', prior: '100.00' });
    expect(b.total.result).toMatchObject({ current: '2825.99', prior: '700.00' });
    expect(b.months[11].cumulative.result).toEqual(b.total.result);
  });

  it('pdf with the table and a bar chart per month', async () => {
    const res = await atHttp.get('/api/reports/bwa?year=2026&format=pdf');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    const { PDFParse } = await import('pdf-parse');
    const text = (await new PDFParse({ data: new Uint8Array(res.raw) }).getText()).text;
    expect(text).toContain('Betriebswirtschaftliche Auswertung 2026');
    expect(text).toContain('3.049,99');
    expect(text).toContain('4.625,99');
    expect(text).toContain('7890 Übriger betrieblicher Aufwand');
  });
});

describe('roles and isolation', () => {
  it('every report is readable by a viewer; unauthenticated is 401', async () => {
    for (const path of ['/api/reports/ust?year=2026&month=3', '/api/reports/datev?year=2026&month=3', '/api/reports/bwa?year=2026']) {
      expect((await atHttp.get(path)).status, path).toBe(200);
      expect((await client(server.url).get(path)).status, path).toBe(401);
    }
  });
});
