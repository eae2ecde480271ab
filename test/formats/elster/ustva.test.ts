import { describe, expect, it } from 'vitest';
import iconv from 'iconv-lite';
import { computeUstvaDe } from '../../../shared/domain/tax/ustvaDe';
import { taxReportReason } from '../../../shared/domain/tax/errors';
import { monthPeriod, quarterPeriod } from '../../../shared/domain/tax/period';
import { buildElsterUstvaXml, normalizeElsterSteuernummer, type ElsterUstvaInput } from '../../../shared/formats/elster/ustvaXml';
import { validateXml } from '../../helpers/xmllint';
import { asLegacy2013, ELSTER_LEGACY_FILE, ELSTER_LEGACY_XSD } from '../../helpers/elsterLegacy';
import { needsOfficialFiles } from '../../helpers/officialFiles';

const LEGACY_XSD = ELSTER_LEGACY_XSD;
const official = needsOfficialFiles([ELSTER_LEGACY_FILE]);

const company = { name: 'Müller & Söhne GmbH €', street: 'Hauptstraße 1', postalCode: '80331', city: 'München', email: 'buchhaltung@example.de' };
const createdAt = new Date('2026-04-09T22:30:00Z'); // 2026-04-10 in Berlin

const decode = (buf: Buffer) => iconv.decode(buf, 'iso-8859-15');

describe('computeUstvaDe (known answers, computed by hand)', () => {
  it('mixed rates with a credit note, reverse charge and input tax', () => {
    const r = computeUstvaDe({
      salesByRate: [
        { taxRate: '19', net: '10000.99' },
        { taxRate: '19', net: '-500.50' }, // credit note
        { taxRate: '7', net: '2000.75' },
        { taxRate: '0', net: '1200.40' },
      ],
      reverseChargeEuNet: '1200.40',
      inputTax: '1234.56',
    });
    // 19 %: 9500.49 -> Kz 81 = 9500 (cents dropped); tax 9500 × 19 % = 1805.00
    // 7 %: 2000.75 -> Kz 86 = 2000; tax 140.00
    // Kz 21 = 1200; Kz 66 = 1234.56; Kz 83 = 1805.00 + 140.00 − 1234.56 = 710.44
    expect(r.kennzahlen).toEqual({ '21': '1200', '41': '0', '43': '0', '66': '1234.56', '81': '9500', '83': '710.44', '86': '2000' });
    expect(r.taxKz81).toBe('1805.00');
    expect(r.taxKz86).toBe('140.00');
    // Exact invoice tax: 9500.49 × 19 % = 1805.0931 -> 1805.09; 2000.75 × 7 % = 140.0525 -> 140.05
    expect(r.exactOutputTax).toBe('1945.14');
    expect(r.payable).toBe('710.44');
    expect(r.unclassifiedZeroRatedNet).toBe('0.00');
  });

  it('a credit period gives a negative Kz 83; a negative base truncates toward zero', () => {
    const credit = computeUstvaDe({ salesByRate: [{ taxRate: '19', net: '100.00' }], reverseChargeEuNet: '0', inputTax: '500.00' });
    // 19.00 − 500.00 = −481.00
    expect(credit.kennzahlen['81']).toBe('100');
    expect(credit.kennzahlen['83']).toBe('-481.00');

    const negative = computeUstvaDe({ salesByRate: [{ taxRate: '19', net: '-250.75' }], reverseChargeEuNet: '0', inputTax: '0.00' });
    // −250.75 -> −250; tax −47.50
    expect(negative.kennzahlen['81']).toBe('-250');
    expect(negative.kennzahlen['83']).toBe('-47.50');
  });

  it('refuses Austrian rates', () => {
    try {
      computeUstvaDe({ salesByRate: [{ taxRate: '20', net: '1.00' }], reverseChargeEuNet: '0', inputTax: '0' });
      expect.unreachable();
    } catch (err) {
      expect(taxReportReason(err)).toBe('UNSUPPORTED_TAX_RATE');
    }
  });
});

describe('ELSTER UStVA XML', () => {
  const base = (over: Partial<ElsterUstvaInput> = {}): ElsterUstvaInput => {
    const r = computeUstvaDe({
      salesByRate: [
        { taxRate: '19', net: '10000.99' },
        { taxRate: '19', net: '-500.50' },
        { taxRate: '7', net: '2000.75' },
        { taxRate: '0', net: '1200.40' },
      ],
      reverseChargeEuNet: '1200.40',
      inputTax: '1234.56',
    });
    return {
      year: 2026,
      period: monthPeriod(2026, 3),
      steuernummer: '9198/0113/10010',
      kennzahlen: r.kennzahlen,
      unclassifiedZeroRatedNet: r.unclassifiedZeroRatedNet,
      company,
      createdAt,
      herstellerId: '74931',
      ...over,
    };
  };

  it('writes the Anmeldungssteuern document: namespace, version, ISO-8859-15, whole euros and cents', () => {
    const xml = buildElsterUstvaXml(base());
    const s = decode(xml);
    expect(s.startsWith('<?xml version="1.0" encoding="ISO-8859-15" standalone="no"?>')).toBe(true);
    expect(s).toContain('<Anmeldungssteuern xmlns="http://finkonsens.de/elster/elsteranmeldung/ustva/v2026" version="2026">');
    expect(s).toContain('<Erstellungsdatum>20260410</Erstellungsdatum>');
    expect(s).toContain('<Jahr>2026</Jahr>');
    expect(s).toContain('<Zeitraum>03</Zeitraum>');
    expect(s).toContain('<Steuernummer>9198011310010</Steuernummer>');
    expect(s).toContain('<Kz09>74931</Kz09>');
    expect(s).toContain('<Kz21>1200</Kz21>');
    expect(s).toContain('<Kz81>9500</Kz81>');
    expect(s).toContain('<Kz86>2000</Kz86>');
    expect(s).toContain('<Kz66>1234.56</Kz66>');
    expect(s).toContain('<Kz83>710.44</Kz83>');
    expect(s).not.toContain('<Kz41>'); // zero Kennzahlen are left out
    expect(s).not.toContain('<Kz43>');
    // Bases: whole euros; tax amounts: exactly two places with "."
    for (const m of s.matchAll(/<Kz(21|41|43|81|86)>([^<]*)</g)) expect(m[2]).toMatch(/^-?\d{1,13}$/);
    for (const m of s.matchAll(/<Kz(66|83)>([^<]*)</g)) expect(m[2]).toMatch(/^-?\d{1,11}\.\d{2}$/);
    // Kennzahlen in numeric order
    const order = [...s.matchAll(/<Kz(\d\d)>/g)].map((m) => Number(m[1]));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    // ISO-8859-15 bytes: € = 0xA4, ü = 0xFC, ö = 0xF6; & escaped
    expect(xml.includes(Buffer.from([0xa4]))).toBe(true);
    expect(xml.includes(Buffer.from('M\xfcller & S\xf6hne', 'latin1'))).toBe(false);
    expect(xml.includes(Buffer.from('M\xfcller &amp; S\xf6hne GmbH \xa4', 'latin1'))).toBe(true);
  });

  it.skipIf(!official)('validates against the legacy 2013 ELSTER schema where it applies', () => {
    const res = validateXml(asLegacy2013(buildElsterUstvaXml(base())), LEGACY_XSD);
    expect(res.valid, res.errors).toBe(true);

    // Quarterly credit period with negative Kz 83, corrected return (Kz 10), no Kz 09.
    const r = computeUstvaDe({ salesByRate: [{ taxRate: '19', net: '100.00' }], reverseChargeEuNet: '0', inputTax: '500.00' });
    const quarter = buildElsterUstvaXml(base({ period: quarterPeriod(2026, 2), kennzahlen: r.kennzahlen, corrected: true, herstellerId: '74931' }));
    expect(decode(quarter)).toContain('<Zeitraum>42</Zeitraum>');
    expect(decode(quarter)).toContain('<Kz10>1</Kz10>');
    expect(decode(quarter)).toContain('<Kz83>-481.00</Kz83>');
    const qres = validateXml(asLegacy2013(quarter), LEGACY_XSD);
    expect(qres.valid, qres.errors).toBe(true);
  });

  it.skipIf(!official)('the legacy check bites: a base with cents or a wrong Steuernummer fails the 2013 XSD', () => {
    const good = decode(asLegacy2013(buildElsterUstvaXml(base())));
    const cents = iconv.encode(good.replace('<Kz81>9500</Kz81>', '<Kz81>9500.49</Kz81>'), 'iso-8859-15');
    expect(validateXml(cents, LEGACY_XSD).valid).toBe(false);
    const stnr = iconv.encode(good.replace('<Steuernummer>9198011310010</Steuernummer>', '<Steuernummer>919811310010</Steuernummer>'), 'iso-8859-15');
    expect(validateXml(stnr, LEGACY_XSD).valid).toBe(false);
  });

  it('refuses inconsistent or unfileable input', () => {
    // Kz 83 not matching Kz 81/86/66
    expect(() => buildElsterUstvaXml(base({ kennzahlen: { '81': '100', '83': '20.00' } }))).toThrow(/Kz 83/);
    // Base with cents
    expect(() => buildElsterUstvaXml(base({ kennzahlen: { '81': '100.50', '83': '19.10' } }))).toThrow(/whole euros/);
    // Unassigned 0 % turnover
    try {
      buildElsterUstvaXml(base({ unclassifiedZeroRatedNet: '12.00' }));
      expect.unreachable();
    } catch (err) {
      expect(taxReportReason(err)).toBe('UNCLASSIFIED_ZERO_RATED');
    }
    expect(() => buildElsterUstvaXml(base({ period: '13' }))).toThrow(/01-12/);
    expect(() => buildElsterUstvaXml(base({ company: { ...company, name: '  ' } }))).toThrow(/company.name/);
    expect(() => normalizeElsterSteuernummer('181/815/08155')).toThrow(/13-digit/);
    expect(normalizeElsterSteuernummer('5133 0815 08155'.replace(/ /g, ''))).toBe('5133081508155');
  });
});
