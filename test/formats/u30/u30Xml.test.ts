import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import iconv from 'iconv-lite';
import { buildU30Xml, normalizeAtTaxNumber, u30XsdFor } from '../../../shared/formats/u30/u30Xml';
import { computeU30 } from '../../../shared/domain/tax/u30';
import { taxReportReason } from '../../../shared/domain/tax/errors';
import { monthPeriod, quarterPeriod } from '../../../shared/domain/tax/period';
import { validateXml } from '../../helpers/xmllint';
import { needsOfficialFiles, schemaPath } from '../../helpers/officialFiles';

const official = needsOfficialFiles([
  'schemas:u30-finanzonline/BMF_ERKLAERUNGS_UEBERMITTLUNG_U30_01_2022.xsd',
  'schemas:u30-finanzonline/BMF_ERKLAERUNGS_UEBERMITTLUNG_U30_07_2026.xsd',
  'schemas:u30-finanzonline/samples/CONSTRUCTED_u30_INVALID_zero_kz.xml',
]);
const createdAt = new Date('2026-04-09T22:30:05Z'); // 2026-04-10 00:30:05 in Vienna

const marchAgg = {
  salesByRate: [
    { taxRate: '20', net: '10000.00' },
    { taxRate: '20', net: '-1234.56' },
    { taxRate: '10', net: '2500.55' },
    { taxRate: '13', net: '1000.10' },
    { taxRate: '0', net: '3000.00' },
  ],
  reverseChargeEuNet: '3000.00',
  inputTax: '987.65',
};

const text = (buf: Buffer) => iconv.decode(buf, 'latin1');

describe('U30 XML', () => {
  it('picks the XSD by period: 01_2022 up to 2026-06, 07_2026 from 2026-07', () => {
    expect(u30XsdFor(monthPeriod(2026, 3))).toBe('u30-finanzonline/BMF_ERKLAERUNGS_UEBERMITTLUNG_U30_01_2022.xsd');
    expect(u30XsdFor({ year: 2026, month: 6 })).toBe('u30-finanzonline/BMF_ERKLAERUNGS_UEBERMITTLUNG_U30_01_2022.xsd');
    expect(u30XsdFor({ year: 2026, month: 7 })).toBe('u30-finanzonline/BMF_ERKLAERUNGS_UEBERMITTLUNG_U30_07_2026.xsd');
    expect(u30XsdFor(quarterPeriod(2026, 2))).toBe('u30-finanzonline/BMF_ERKLAERUNGS_UEBERMITTLUNG_U30_01_2022.xsd');
    expect(u30XsdFor(quarterPeriod(2026, 3))).toBe('u30-finanzonline/BMF_ERKLAERUNGS_UEBERMITTLUNG_U30_07_2026.xsd');
  });

  it.skipIf(!official)('the validator bites: the INVALID sample with a zero Kennzahl fails the XSD', () => {
    const res = validateXml(
      readFileSync(schemaPath('u30-finanzonline/samples/CONSTRUCTED_u30_INVALID_zero_kz.xml')),
      schemaPath('u30-finanzonline/BMF_ERKLAERUNGS_UEBERMITTLUNG_U30_07_2026.xsd'),
    );
    expect(res.valid).toBe(false);
  });

  it.skipIf(!official)('2026-03: valid against the 01_2022 XSD, with the expected Kennzahlen and no tax or 095', () => {
    const r = computeU30(marchAgg);
    const xml = buildU30Xml({ period: monthPeriod(2026, 3), taxNumber: '12-345/6789', kennzahlen: r.kennzahlen, createdAt });
    const res = validateXml(xml, schemaPath(u30XsdFor(monthPeriod(2026, 3))));
    expect(res.valid, res.errors).toBe(true);
    const s = text(xml);
    expect(s.startsWith('<?xml version="1.0" encoding="iso-8859-1"?>')).toBe(true);
    expect(s).toContain('<IDENTIFIKATIONSBEGRIFF>123456789</IDENTIFIKATIONSBEGRIFF>');
    expect(s).toContain('<FASTNR>123456789</FASTNR>');
    expect(s).toContain('<DATUM_ERSTELLUNG type="datum">2026-04-10</DATUM_ERSTELLUNG>');
    expect(s).toContain('<UHRZEIT_ERSTELLUNG type="uhrzeit">00:30:05</UHRZEIT_ERSTELLUNG>');
    expect(s).toContain('<ZRVON type="jahrmonat">2026-03</ZRVON>');
    expect(s).toContain('<ZRBIS type="jahrmonat">2026-03</ZRBIS>');
    expect(s).toContain('<KZ000 type="kz">15266.09</KZ000>');
    expect(s).toContain('<KZ021 type="kz">3000.00</KZ021>');
    expect(s).toContain('<KZ022 type="kz">8765.44</KZ022>');
    expect(s).toContain('<KZ029 type="kz">2500.55</KZ029>');
    expect(s).toContain('<KZ006 type="kz">1000.10</KZ006>');
    expect(s).toContain('<KZ060 type="kz">987.65</KZ060>');
    expect(s).not.toContain('KZ095');
    expect(s).not.toContain('STEUERFREI'); // 011 / 017 are zero
    expect(s).not.toMatch(/<KZ\d{3} type="kz">0\.00</);
  });

  it.skipIf(!official)('2026-08 credit period: valid against the 07_2026 XSD, zero Kennzahlen omitted', () => {
    const r = computeU30({ salesByRate: [{ taxRate: '20', net: '1000.00' }], reverseChargeEuNet: '0.00', inputTax: '1500.00' });
    expect(r.kennzahlen['095']).toBe('-1300.00');
    const period = monthPeriod(2026, 8);
    const xml = buildU30Xml({ period, taxNumber: '123456789', kennzahlen: r.kennzahlen, createdAt, customerInfo: 'Übermittlung 2026-08 €' });
    const res = validateXml(xml, schemaPath(u30XsdFor(period)));
    expect(res.valid, res.errors).toBe(true);
    expect(u30XsdFor(period)).toContain('07_2026');
    const s = text(xml);
    expect(s).toContain('<KZ000 type="kz">1000.00</KZ000>');
    expect(s).toContain('<KZ022 type="kz">1000.00</KZ022>');
    expect(s).toContain('<KZ060 type="kz">1500.00</KZ060>');
    for (const kz of ['KZ021', 'KZ029', 'KZ006', 'KZ011', 'KZ017', 'KZ095']) expect(s).not.toContain(kz);
    expect(s).not.toMatch(/<KZ\d{3} type="kz">0\.00</);
    // ISO-8859-1 bytes: Ü is one byte 0xDC; € is not in Latin-1 and becomes a character reference.
    expect(xml.includes(Buffer.from([0xdc]))).toBe(true);
    expect(s).toContain('<KUNDENINFO>Übermittlung 2026-08 &#x20AC;</KUNDENINFO>');
  });

  it.skipIf(!official)('a quarter with exports and intra-Community supplies validates (STEUERFREI group); a zero period keeps KZ 000', () => {
    const r = computeU30({
      salesByRate: [
        { taxRate: '0', net: '4500.00' },
        { taxRate: '20', net: '500.00' },
      ],
      reverseChargeEuNet: '1000.00',
      exportNet: '1500.00',
      intraCommunitySupplyNet: '2000.00',
      inputTax: '0.00',
    });
    const period = quarterPeriod(2026, 3);
    const xml = buildU30Xml({ period, taxNumber: '123456789', submittedBy: '98-765/4321', kennzahlen: r.kennzahlen, createdAt, packageNumber: 42 });
    const res = validateXml(xml, schemaPath(u30XsdFor(period)));
    expect(res.valid, res.errors).toBe(true);
    const s = text(xml);
    expect(s).toContain('<ZRVON type="jahrmonat">2026-07</ZRVON>');
    expect(s).toContain('<ZRBIS type="jahrmonat">2026-09</ZRBIS>');
    expect(s).toContain('<IDENTIFIKATIONSBEGRIFF>987654321</IDENTIFIKATIONSBEGRIFF>');
    expect(s).toContain('<PAKET_NR>42</PAKET_NR>');
    expect(s).toMatch(/<STEUERFREI>\s*<KZ011 type="kz">1500.00<\/KZ011>\s*<KZ017 type="kz">2000.00<\/KZ017>\s*<\/STEUERFREI>/);
    expect(s).not.toContain('<VORSTEUER>');

    const empty = computeU30({ salesByRate: [], reverseChargeEuNet: '0', inputTax: '0' });
    const zeroXml = buildU30Xml({ period: monthPeriod(2026, 3), taxNumber: '123456789', kennzahlen: empty.kennzahlen, createdAt });
    const zeroRes = validateXml(zeroXml, schemaPath(u30XsdFor(monthPeriod(2026, 3))));
    expect(zeroRes.valid, zeroRes.errors).toBe(true);
    expect(text(zeroXml)).toContain('<KZ000 type="kz">0.00</KZ000>');
    expect(text(zeroXml)).not.toContain('VERSTEUERT');
  });

  it('refuses what FinanzOnline cannot take: negative bases, unclassified 0 % turnover, bad tax numbers', () => {
    const negative = computeU30({ salesByRate: [{ taxRate: '20', net: '-500.00' }], reverseChargeEuNet: '0', inputTax: '0' });
    expect(() => buildU30Xml({ period: monthPeriod(2026, 3), taxNumber: '123456789', kennzahlen: negative.kennzahlen })).toThrow(/negative/);
    try {
      buildU30Xml({ period: monthPeriod(2026, 3), taxNumber: '123456789', kennzahlen: negative.kennzahlen });
    } catch (err) {
      expect(taxReportReason(err)).toBe('NEGATIVE_KENNZAHL');
    }

    const unclassified = computeU30({ salesByRate: [{ taxRate: '0', net: '100.00' }], reverseChargeEuNet: '40.00', inputTax: '0' });
    expect(unclassified.unclassifiedZeroRatedNet).toBe('60.00');
    try {
      buildU30Xml({ period: monthPeriod(2026, 3), taxNumber: '123456789', kennzahlen: unclassified.kennzahlen });
      expect.unreachable();
    } catch (err) {
      expect(taxReportReason(err)).toBe('UNCLASSIFIED_ZERO_RATED');
    }

    for (const bad of ['12345678', '1234567890', '00-000/0001', 'AB-345/6789', '99-999/9999']) {
      expect(() => normalizeAtTaxNumber(bad)).toThrow(/Steuernummer/);
    }
    expect(normalizeAtTaxNumber('12 345/6789')).toBe('123456789');
  });
});
