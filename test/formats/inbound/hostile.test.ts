/**
 * Hostile and broken input: every case comes back as { ok: false, reason } with a reason that
 * says what was wrong, and nothing throws.
 */
import { randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { PDFDocument } from '@cantoo/pdf-lib';
import iconv from 'iconv-lite';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCiiXml } from '../../../shared/formats/cii/ciiInvoice';
import { renderZugferdPdf } from '../../../shared/formats/zugferd/facturx';
import { readEInvoice } from '../../../shared/formats/inbound/readEInvoice';
import { makeDocumentInput } from '../pdf/fixtures';

const UBL_NS = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2';
const CBC_NS = 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2';
const xml = (s: string) => Buffer.from(s, 'utf8');

async function refused(bytes: Buffer, mediaType = 'application/xml'): Promise<string> {
  const r = await readEInvoice(bytes, mediaType);
  if (r.ok) throw new Error('expected the input to be refused');
  expect(r.reason.length).toBeGreaterThan(10);
  return r.reason;
}

async function pdfWith(attachments: Array<{ name: string; bytes: Uint8Array }>): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.addPage([200, 200]);
  for (const a of attachments) await doc.attach(a.bytes, a.name, { mimeType: 'text/xml' });
  return Buffer.from(await doc.save());
}

const cii = buildCiiXml(makeDocumentInput());

describe('readEInvoice: hostile and broken input', () => {
  it('refuses an external entity (XXE) before parsing', async () => {
    const reason = await refused(
      xml(`<?xml version="1.0"?><!DOCTYPE Invoice [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<Invoice xmlns="${UBL_NS}" xmlns:cbc="${CBC_NS}"><cbc:ID>&xxe;</cbc:ID></Invoice>`),
    );
    expect(reason).toMatch(/DOCTYPE or entities.*XXE/);
  });

  it('refuses a billion-laughs entity expansion', async () => {
    const lol = Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('');
    const reason = await refused(xml(`<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol0 "lol">${lol}]><lolz>&lol9;</lolz>`));
    expect(reason).toMatch(/entity expansion/);
  });

  it('refuses any DOCTYPE, even one without entities', async () => {
    expect(await refused(xml(`<!DOCTYPE Invoice><Invoice xmlns="${UBL_NS}"/>`))).toMatch(/DOCTYPE/);
  });

  it('refuses XML that is not well-formed', async () => {
    expect(await refused(xml(`<Invoice xmlns="${UBL_NS}"><ID>1</Invoice>`))).toMatch(/not well-formed/);
    expect(await refused(Buffer.from(cii.slice(0, cii.length / 2)))).toMatch(/not well-formed/);
  });

  it('refuses an unknown root element and names it', async () => {
    expect(await refused(xml('<Order xmlns="urn:example:order"><ID>1</ID></Order>'))).toMatch(/unknown root element Order in namespace urn:example:order/);
    // A UBL element name in the wrong namespace is not UBL.
    expect(await refused(xml('<Invoice><ID>1</ID></Invoice>'))).toMatch(/unknown root element Invoice/);
  });

  it('refuses ZUGFeRD 1.0 and ebInterface versions other than 6.0 / 6.1', async () => {
    expect(await refused(xml('<rsm:CrossIndustryDocument xmlns:rsm="urn:ferd:CrossIndustryDocument:invoice:1p0"/>'))).toMatch(/ZUGFeRD 1\.0/);
    expect(await refused(xml('<Invoice xmlns="http://www.ebinterface.at/schema/5p0/"/>'))).toMatch(/ebInterface 5\.0 is not read/);
  });

  it('refuses a document without its mandatory header', async () => {
    expect(await refused(xml(`<Invoice xmlns="${UBL_NS}"/>`))).toMatch(/BT-5|BT-1/);
  });

  it('refuses random binary and empty input', async () => {
    const noise = randomBytes(4096);
    noise[0] = 0x00;
    expect(await refused(noise, 'application/octet-stream')).toMatch(/neither XML nor PDF/);
    expect(await refused(Buffer.alloc(0))).toMatch(/neither XML nor PDF/);
  });

  it('refuses oversized XML and PDF before reading them', async () => {
    const bigXml = Buffer.concat([xml('<a>'), Buffer.alloc(5 * 1024 * 1024, 0x20), xml('</a>')]);
    expect(await refused(bigXml)).toMatch(/larger than 5 MB/);
    const bigPdf = Buffer.concat([xml('%PDF-1.7\n'), Buffer.alloc(10 * 1024 * 1024, 0x20)]);
    expect(await refused(bigPdf, 'application/pdf')).toMatch(/larger than 10 MB/);
  });

  it('refuses deeply nested XML without throwing', async () => {
    const depth = 50_000;
    expect(await refused(xml(`${'<a>'.repeat(depth)}${'</a>'.repeat(depth)}`))).toMatch(/cannot be parsed \(Maximum nested tags exceeded\)/);
    expect(await refused(xml('<a>'.repeat(300_000)))).toMatch(/more than 200000 elements/);
  });

  it('refuses a PDF without an embedded invoice, and one with only other attachments', async () => {
    expect(await refused(await pdfWith([]), 'application/pdf')).toMatch(/no embedded files/);
    const other = await pdfWith([{ name: 'notes.xml', bytes: xml('<notes/>') }]);
    expect(await refused(other, 'application/pdf')).toMatch(/no embedded invoice XML.*notes\.xml/);
  });

  it('refuses a broken PDF', async () => {
    expect(await refused(xml('%PDF-1.7\n1 0 obj << /Type /Catalog'), 'application/pdf')).toMatch(/PDF cannot be read|no embedded files/);
  });

  it('stops decompressing an embedded deflate bomb at 5 MB', async () => {
    const bomb = Buffer.concat([xml('<a>'), Buffer.alloc(8 * 1024 * 1024, 0x20), xml('</a>')]);
    expect(deflateSync(bomb).length).toBeLessThan(100_000);
    const pdf = await pdfWith([{ name: 'factur-x.xml', bytes: bomb }]);
    expect(pdf.length).toBeLessThan(200_000);
    expect(await refused(pdf, 'application/pdf')).toMatch(/larger than 5 MB once decompressed/);
  });

  it('refuses a deflate bomb in any PDF stream before pdf-lib inflates it', async () => {
    const bomb = deflateSync(Buffer.alloc(60 * 1024 * 1024));
    const pdf = Buffer.concat([
      xml('%PDF-1.7\n1 0 obj << /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode >>\nstream\n'),
      bomb,
      xml('\nendstream\nendobj\n%%EOF\n'),
    ]);
    expect(pdf.length).toBeLessThan(200_000);
    expect(await refused(pdf, 'application/pdf')).toMatch(/expands beyond 50 MB.*deflate bomb/);
  });

  it('refuses a hostile XML inside a PDF as it would outside', async () => {
    const pdf = await pdfWith([{ name: 'factur-x.xml', bytes: xml('<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>') }]);
    expect(await refused(pdf, 'application/pdf')).toMatch(/DOCTYPE/);
  });

  it('amounts: more than 4 decimals are refused, 3–4 are read with a warning', async () => {
    const grand = /<ram:GrandTotalAmount>([^<]+)<\/ram:GrandTotalAmount>/;
    const value = grand.exec(cii)?.[1];
    if (!value) throw new Error('no GrandTotalAmount in the CII');
    const fiveDecimals = cii.replace(grand, `<ram:GrandTotalAmount>${value}001</ram:GrandTotalAmount>`);
    expect(await refused(xml(fiveDecimals))).toMatch(/BT-112 has 5 decimals.*EN 16931 allows 2/);
    // Trailing zeros are not decimals that count.
    const zeros = await readEInvoice(xml(cii.replace(grand, `<ram:GrandTotalAmount>${value}00000</ram:GrandTotalAmount>`)), 'application/xml');
    expect(zeros.ok && zeros.warnings).toEqual([]);
    const threeDecimals = await readEInvoice(xml(cii.replace(grand, `<ram:GrandTotalAmount>${value}1</ram:GrandTotalAmount>`)), 'application/xml');
    if (!threeDecimals.ok) throw new Error(threeDecimals.reason);
    expect(threeDecimals.warnings).toEqual([expect.stringMatching(/BT-112 has 3 decimals/)]);
  });

  it('refuses amounts that are not decimals and a negative net price (BR-27)', async () => {
    expect(await refused(xml(cii.replace(/<ram:GrandTotalAmount>[^<]+</, '<ram:GrandTotalAmount>1e9<')))).toMatch(/BT-112 is not a decimal amount/);
    const negativePrice = cii.replace(/(<ram:NetPriceProductTradePrice>\s*<ram:ChargeAmount>)/, '$1-');
    expect(await refused(xml(negativePrice))).toMatch(/line 1 has a negative net price.*BR-27/);
  });

  it('reads a negative quantity on an invoice line, with a warning (EN 16931 allows returns)', async () => {
    const negative = cii.replace(/(<ram:BilledQuantity[^>]*>)/, '$1-').replace(/(<ram:LineTotalAmount>)/, '$1-');
    const r = await readEInvoice(xml(negative), 'application/xml');
    if (!r.ok) throw new Error(r.reason);
    expect(r.warnings).toContainEqual(expect.stringMatching(/line 1 has a negative quantity/));
  });

  it('refuses a date that is not a calendar date', async () => {
    const bad = cii.replace(/(<ram:IssueDateTime>\s*<udt:DateTimeString format="102">)\d{8}/, '$120260231');
    expect(await refused(xml(bad))).toMatch(/issue date \(BT-2\) is not a calendar date: 2026-02-31/);
  });

  it('reads a declared ISO-8859-1 document and refuses other encodings and broken UTF-8', async () => {
    const latin1 = iconv.encode(cii.replace('encoding="UTF-8"', 'encoding="ISO-8859-1"'), 'latin1');
    const r = await readEInvoice(latin1, 'application/xml');
    if (!r.ok) throw new Error(r.reason);
    expect(r.invoice.seller.name).toBe('Müller & Söhne Software GmbH');
    expect(await refused(Buffer.from(cii.replace('encoding="UTF-8"', 'encoding="EBCDIC"')))).toMatch(/encoding ebcdic is not accepted/);
    expect(await refused(Buffer.concat([xml(cii.slice(0, 200)), Buffer.from([0xc3, 0x28]), xml(cii.slice(200))]))).toMatch(/not valid UTF-8/);
  });

  it('reads a UBL invoice embedded in a PDF as xrechnung.xml', async () => {
    const cac = 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2';
    const ubl = `<Invoice xmlns="${UBL_NS}" xmlns:cbc="${CBC_NS}" xmlns:cac="${cac}">
<cbc:CustomizationID>urn:cen.eu:en16931:2017</cbc:CustomizationID><cbc:ID>UBL-1</cbc:ID>
<cbc:IssueDate>2026-11-27</cbc:IssueDate><cbc:DocumentCurrencyCode>EUR</cbc:DocumentCurrencyCode>
<cac:LegalMonetaryTotal><cbc:LineExtensionAmount currencyID="EUR">10.00</cbc:LineExtensionAmount>
<cbc:PayableAmount currencyID="EUR">12.00</cbc:PayableAmount></cac:LegalMonetaryTotal>
<cac:InvoiceLine><cbc:ID>1</cbc:ID><cbc:InvoicedQuantity unitCode="C62">1</cbc:InvoicedQuantity>
<cbc:LineExtensionAmount currencyID="EUR">10.00</cbc:LineExtensionAmount><cac:Item><cbc:Name>A &amp; B</cbc:Name></cac:Item>
<cac:Price><cbc:PriceAmount currencyID="EUR">10</cbc:PriceAmount></cac:Price></cac:InvoiceLine></Invoice>`;
    const r = await readEInvoice(await pdfWith([{ name: 'xrechnung.xml', bytes: xml(ubl) }]), 'application/pdf');
    if (!r.ok) throw new Error(r.reason);
    expect([r.format, r.syntax, r.invoice.number, r.invoice.lines[0].name, r.invoice.totals.due]).toEqual(['facturx-pdf', 'UBL', 'UBL-1', 'A & B', '12.00']);
  });

  it('warns when the media type disagrees with the content', async () => {
    const r = await readEInvoice(xml(cii), 'application/pdf');
    expect(r.ok && r.warnings).toEqual([expect.stringMatching(/declared as application\/pdf but the content is XML/)]);
  });

  it('never throws on mutated or truncated invoices (XML and PDF)', async () => {
    const pdf = await renderZugferdPdf(makeDocumentInput(), cii);
    const base = [Buffer.from(cii, 'utf8'), pdf];
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 1 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 20 }),
        fc.option(fc.nat()),
        async (which, edits, cut) => {
          const bytes = Buffer.from(base[which]);
          for (const [at, value] of edits) bytes[at % bytes.length] = value;
          const input = cut === null ? bytes : bytes.subarray(0, cut % bytes.length);
          const r = await readEInvoice(input, which ? 'application/pdf' : 'application/xml');
          expect(typeof r.ok).toBe('boolean');
          if (!r.ok) expect(r.reason).not.toBe('');
        },
      ),
      { numRuns: 150 },
    );
  });
});
