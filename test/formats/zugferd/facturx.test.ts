import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFRawStream, PDFString, PDFHexString, decodePDFRawStream } from '@cantoo/pdf-lib';
import { buildCiiXml } from '../../../shared/formats/cii/ciiInvoice';
import { renderInvoicePdf } from '../../../shared/formats/pdf/invoicePdf';
import { embedFacturX, renderZugferdPdf } from '../../../shared/formats/zugferd/facturx';
import { makeDocumentInput } from '../pdf/fixtures';
import { allText, detachFile, detachList, fonts, pdfInfo, xmpOf } from '../pdf/pdfTools';
import { needsOfficialFiles, schemaPath } from '../../helpers/officialFiles';

// The CII our writer makes for the invoice: UTF-8 with umlauts, so byte equality also proves no re-encoding.
const xml = buildCiiXml(makeDocumentInput());
// The CEN's own CII example (other namespace prefixes than ours).
const official = needsOfficialFiles(['schemas:cii-d16b/samples/CII_example1.xml']);

async function load(pdf: Buffer): Promise<PDFDocument> {
  return PDFDocument.load(new Uint8Array(pdf), { updateMetadata: false });
}

function text(obj: unknown): string {
  if (obj instanceof PDFHexString || obj instanceof PDFString) return obj.decodeText();
  return String(obj);
}

describe('renderZugferdPdf', () => {
  let pdf: Buffer;

  beforeAll(async () => {
    pdf = await renderZugferdPdf(makeDocumentInput(), xml);
  });

  it('embeds factur-x.xml byte for byte (pdfdetach)', () => {
    expect(detachList(pdf)).toEqual(['factur-x.xml']);
    const extracted = detachFile(pdf, 'factur-x.xml');
    expect(extracted.equals(Buffer.from(xml, 'utf8'))).toBe(true);
    expect(extracted.toString('utf8')).toContain('Müller &amp; Söhne Software GmbH');
  });

  it('lists the file in the catalog /AF array and the EmbeddedFiles name tree', async () => {
    const doc = await load(pdf);
    const af = doc.catalog.lookup(PDFName.of('AF'), PDFArray);
    expect(af.size()).toBe(1);
    const spec = af.lookup(0, PDFDict);
    expect(spec.get(PDFName.of('Type'))).toBe(PDFName.of('Filespec'));
    expect(spec.get(PDFName.of('AFRelationship'))).toBe(PDFName.of('Alternative'));
    expect(text(spec.get(PDFName.of('F')))).toBe('factur-x.xml');
    expect(text(spec.get(PDFName.of('UF')))).toBe('factur-x.xml');

    const stream = spec.lookup(PDFName.of('EF'), PDFDict).lookup(PDFName.of('F'));
    if (!(stream instanceof PDFRawStream)) throw new Error('embedded file stream missing');
    expect(stream.dict.get(PDFName.of('Type'))).toBe(PDFName.of('EmbeddedFile'));
    expect(stream.dict.get(PDFName.of('Subtype'))).toBe(PDFName.of('text/xml'));
    const params = stream.dict.lookup(PDFName.of('Params'), PDFDict);
    expect(params.get(PDFName.of('ModDate'))).toBeDefined();
    expect(params.get(PDFName.of('Size'))?.toString()).toBe(String(Buffer.byteLength(xml, 'utf8')));
    expect(Buffer.from(decodePDFRawStream(stream).decode()).toString('utf8')).toBe(xml);

    const names = doc.catalog.lookup(PDFName.of('Names'), PDFDict).lookup(PDFName.of('EmbeddedFiles'), PDFDict).lookup(PDFName.of('Names'), PDFArray);
    expect(text(names.lookup(0))).toBe('factur-x.xml');
    // The name tree and /AF point at the same file specification object.
    expect(names.get(1)).toBe(af.get(0));
  });

  it('writes XMP with PDF/A-3B identification and the Factur-X extension schema', () => {
    const xmp = xmpOf(pdf);
    expect(XMLValidator.validate(xmp)).toBe(true);
    const parsed = new XMLParser({ ignoreAttributes: false, removeNSPrefix: false, parseTagValue: false }).parse(xmp);
    const descriptions: Array<Record<string, unknown>> = parsed['x:xmpmeta']['rdf:RDF']['rdf:Description'];
    const find = (key: string) => descriptions.find((d) => key in d)!;

    expect(find('pdfaid:part')['pdfaid:part']).toBe('3');
    expect(find('pdfaid:conformance')['pdfaid:conformance']).toBe('B');

    const fx = find('fx:DocumentType');
    expect(fx['@_xmlns:fx']).toBe('urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#');
    expect(fx['fx:DocumentType']).toBe('INVOICE');
    expect(fx['fx:DocumentFileName']).toBe('factur-x.xml');
    expect(fx['fx:Version']).toBe('1.0');
    expect(fx['fx:ConformanceLevel']).toBe('EN 16931');

    const schema = find('pdfaExtension:schemas')['pdfaExtension:schemas'] as any;
    const entry = schema['rdf:Bag']['rdf:li'];
    expect(entry['pdfaSchema:namespaceURI']).toBe('urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#');
    expect(entry['pdfaSchema:prefix']).toBe('fx');
    const props = entry['pdfaSchema:property']['rdf:Seq']['rdf:li'].map((p: any) => p['pdfaProperty:name']);
    expect(props.sort()).toEqual(['ConformanceLevel', 'DocumentFileName', 'DocumentType', 'Version']);
  });

  it('keeps info dictionary and XMP in agreement', () => {
    const info = pdfInfo(pdf);
    const xmp = xmpOf(pdf);
    expect(info).toMatch(/Title:\s+Rechnung RE-2026-00042/);
    expect(xmp).toContain('<rdf:li xml:lang="x-default">Rechnung RE-2026-00042</rdf:li>');
    expect(info).toMatch(/Author:\s+Müller & Söhne Software GmbH/);
    expect(xmp).toContain('<rdf:li>Müller &amp; Söhne Software GmbH</rdf:li>');
    expect(info).toMatch(/Keywords:\s+Factur-X ZUGFeRD EN 16931 RE-2026-00042/);
    expect(xmp).toContain('<pdf:Keywords>Factur-X ZUGFeRD EN 16931 RE-2026-00042</pdf:Keywords>');
    expect(xmp).toContain('<xmp:CreateDate>2026-03-10T08:15:00Z</xmp:CreateDate>');
    expect(pdfInfo(pdf, '-isodates')).toMatch(/ModDate:\s+2026-03-10T08:15:00/);
  });

  it('remains the visible invoice, PDF 1.7 with embedded fonts and an output intent', () => {
    const body = allText(pdf);
    expect(body).toContain('Rechnung RE-2026-00042');
    expect(body).toMatch(/Gesamtbetrag brutto 2\.797,90 €/);
    expect(pdf.subarray(0, 8).toString('latin1')).toBe('%PDF-1.7');
    expect(pdf.toString('latin1')).toContain('/GTS_PDFA1');
    for (const f of fonts(pdf)) expect(f.embedded).toBe(true);
  });

  it('is reproducible', async () => {
    const again = await renderZugferdPdf(makeDocumentInput(), xml);
    expect(again.equals(pdf)).toBe(true);
  });

  it('refuses drafts', async () => {
    await expect(renderZugferdPdf(makeDocumentInput({ invoice: { status: 'entwurf', number: null } }), xml)).rejects.toThrow(/draft/);
  });
});

describe('embedFacturX', () => {
  const meta = { invoiceNumber: 'RE-2026-00042', title: 'Rechnung RE-2026-00042', sellerName: 'Müller & Söhne Software GmbH', issueDate: '2026-03-10' };

  it('replaces an earlier factur-x.xml instead of adding a second one', async () => {
    const base = await renderInvoicePdf(makeDocumentInput(), { pdfA: true });
    const first = await embedFacturX(base, xml, meta);
    const other = buildCiiXml(makeDocumentInput({ invoice: { number: 'RE-2026-00043' } }));
    const second = await embedFacturX(first, other, meta);
    expect(detachList(second)).toEqual(['factur-x.xml']);
    expect(detachFile(second, 'factur-x.xml').toString('utf8')).toBe(other);
    const doc = await load(second);
    expect(doc.catalog.lookup(PDFName.of('AF'), PDFArray).size()).toBe(1);
  });

  it.skipIf(!official)('accepts CEN CII samples too (other namespace prefixes)', async () => {
    const cen = readFileSync(schemaPath('cii-d16b/samples/CII_example1.xml'), 'utf8');
    const out = await embedFacturX(await renderInvoicePdf(makeDocumentInput(), { pdfA: true }), cen, meta);
    expect(detachFile(out, 'factur-x.xml').toString('utf8')).toBe(cen);
  });

  it('rejects a PDF that is not PDF/A-3', async () => {
    const plain = await renderInvoicePdf(makeDocumentInput());
    await expect(embedFacturX(plain, xml, meta)).rejects.toThrow(/PDF\/A-3/);
  });

  it('rejects XML that is not a CrossIndustryInvoice', async () => {
    const base = await renderInvoicePdf(makeDocumentInput(), { pdfA: true });
    await expect(embedFacturX(base, '<Invoice xmlns="http://www.ebinterface.at/schema/6p1/"/>', meta)).rejects.toThrow(/CrossIndustryInvoice/);
    await expect(embedFacturX(base, '', meta)).rejects.toThrow(/CrossIndustryInvoice/);
  });
});
