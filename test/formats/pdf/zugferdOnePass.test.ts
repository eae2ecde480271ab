/**
 * ZUGFeRD in one pass: pdfkit writes factur-x.xml, the info entries and the XMP while it renders
 * (renderZugferdPdf), where it used to render a PDF/A-3 and have pdf-lib load it, add the file
 * and rewrite the XMP (embedFacturX, still the function for finished PDF bytes). The one-pass
 * file must be what the two-pass one was: the same text and word boxes, the same embedded fonts,
 * the same attachment (relationship, checksum, bytes, XSD-valid), the same info and XMP.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, PDFRawStream, PDFString, decodePDFRawStream } from '@cantoo/pdf-lib';
import { asIssued, renderDocument } from '../../../shared/documents/renderDocument';
import { buildCiiXml } from '../../../shared/formats/cii/ciiInvoice';
import { renderInvoicePdf } from '../../../shared/formats/pdf/invoicePdf';
import { documentNumber, documentTitle } from '../../../shared/formats/pdf/invoiceHeader';
import { displayName } from '../../../shared/formats/pdf/parties';
import { embedFacturX } from '../../../shared/formats/zugferd/facturx';
import type { DocumentInput } from '../../../shared/domain/invoiceView';
import { needsOfficialFiles } from '../../helpers/officialFiles';
import { validateXml } from '../../helpers/xmllint';
import { CII_XSD, CII_XSD_FILE } from '../cii/fixtures';
import { makeDocumentInput, manyItems } from './fixtures';
import { allText, detachFile, detachList, fonts, pdfInfo, wordBoxes, xmpOf } from './pdfTools';

const official = needsOfficialFiles([CII_XSD_FILE]);

/** The two-pass path as it was: a PDF/A-3 from pdfkit, then embedFacturX (pdf-lib load, attach, XMP, save). */
async function twoPass(raw: DocumentInput): Promise<Buffer> {
  const input = asIssued(raw);
  const base = await renderInvoicePdf(input, { pdfA: true });
  return embedFacturX(base, buildCiiXml(input), {
    invoiceNumber: documentNumber(input) as string,
    title: documentTitle(input),
    sellerName: displayName(input.seller),
    issueDate: input.invoice.issueDate,
    profile: 'EN 16931',
  });
}

const INFO_FIELDS = ['Title', 'Subject', 'Keywords', 'Author', 'Creator', 'Producer', 'CreationDate', 'ModDate', 'Pages', 'Page size', 'PDF version'];
function infoFields(pdf: Buffer): Record<string, string> {
  const out = pdfInfo(pdf, '-isodates');
  return Object.fromEntries(INFO_FIELDS.map((f) => [f, new RegExp(`^${f}:\\s+(.*)$`, 'm').exec(out)?.[1] ?? '']));
}

const text = (o: unknown) => (o instanceof PDFString || o instanceof PDFHexString ? o.decodeText() : String(o));

/** The Filespec in /AF and its embedded stream, read with pdf-lib. */
async function attachment(pdf: Buffer) {
  const doc = await PDFDocument.load(new Uint8Array(pdf), { updateMetadata: false });
  const af = doc.catalog.lookup(PDFName.of('AF'), PDFArray);
  const spec = af.lookup(0, PDFDict);
  const stream = spec.lookup(PDFName.of('EF'), PDFDict).lookup(PDFName.of('F'));
  if (!(stream instanceof PDFRawStream)) throw new Error('embedded file stream missing');
  const params = stream.dict.lookup(PDFName.of('Params'), PDFDict);
  const names = doc.catalog.lookup(PDFName.of('Names'), PDFDict).lookup(PDFName.of('EmbeddedFiles'), PDFDict).lookup(PDFName.of('Names'), PDFArray);
  const metadata = doc.catalog.lookup(PDFName.of('Metadata'));
  return {
    afCount: af.size(),
    relationship: spec.get(PDFName.of('AFRelationship')),
    f: text(spec.get(PDFName.of('F'))),
    uf: text(spec.get(PDFName.of('UF'))),
    desc: text(spec.get(PDFName.of('Desc'))),
    subtype: stream.dict.get(PDFName.of('Subtype')),
    size: params.get(PDFName.of('Size'))?.toString(),
    checksum: (params.get(PDFName.of('CheckSum')) as PDFHexString | PDFString).asBytes(),
    modDate: text(params.get(PDFName.of('ModDate'))),
    bytes: Buffer.from(decodePDFRawStream(stream).decode()),
    nameTreeKey: text(names.lookup(0)),
    sameSpec: names.get(1) === af.get(0),
    // PDF/A: the XMP stream unfiltered; an sRGB output intent.
    metadataFilter: metadata instanceof PDFRawStream ? metadata.dict.get(PDFName.of('Filter')) : 'missing',
    outputIntent: doc.catalog.lookup(PDFName.of('OutputIntents'), PDFArray).lookup(0, PDFDict).get(PDFName.of('S')),
  };
}

const ready = { contactName: 'Buchhaltung', contactPhone: '+43 1 234 56 78', contactEmail: 'buchhaltung@example.at' };
const cases: Record<string, DocumentInput> = {
  'the default invoice': makeDocumentInput(),
  '10 items': makeDocumentInput({ items: manyItems(10), seller: ready, invoice: { buyerReference: 'KST-4711' } }),
  '60 items (pages)': makeDocumentInput({ items: manyItems(60) }),
  'a Japanese customer (fallback font)': makeDocumentInput({
    customer: { company: '株式会社テスト商事', name: '山田太郎', address: '東京都千代田区丸の内 1-1\n100-0005 東京' },
    seller: ready,
    invoice: { buyerReference: 'KST-4711' },
    items: [{ description: 'ソフトウェアのライセンス（年間）', quantity: '2', unit: '個', unitPrice: '120.00', taxRate: '20' }],
  }),
};

describe('ZUGFeRD written in one pass by pdfkit', () => {
  for (const [name, input] of Object.entries(cases)) {
    it(`${name}: the same document as the pdf-lib pass`, async () => {
      const onePass = await renderDocument('zugferd', input);
      const reference = await twoPass(input);

      const body = allText(onePass);
      expect(body).toBe(allText(reference));
      expect(body).not.toContain('\uFFFD');
      expect(wordBoxes(onePass)).toEqual(wordBoxes(reference));
      const used = fonts(onePass);
      expect(used).toEqual(fonts(reference));
      for (const f of used) expect(f, f.name).toMatchObject({ embedded: true });

      expect(infoFields(onePass)).toEqual(infoFields(reference));
      expect(xmpOf(onePass)).toBe(xmpOf(reference));

      expect(detachList(onePass)).toEqual(['factur-x.xml']);
      const xml = detachFile(onePass, 'factur-x.xml');
      expect(xml.equals(detachFile(reference, 'factur-x.xml'))).toBe(true);
      expect(xml.toString('utf8')).toBe(buildCiiXml(asIssued(input)));

      const a = await attachment(onePass);
      expect(a).toEqual(await attachment(reference));
      expect(a).toMatchObject({
        afCount: 1,
        relationship: PDFName.of('Alternative'),
        f: 'factur-x.xml',
        uf: 'factur-x.xml',
        nameTreeKey: 'factur-x.xml',
        sameSpec: true,
      });
      expect(a.subtype).toBe(PDFName.of('text/xml'));
      expect(Buffer.from(a.checksum).toString('hex')).toBe(createHash('md5').update(xml).digest('hex'));
      expect(a.metadataFilter).toBeUndefined();
      expect(a.outputIntent).toBe(PDFName.of('GTS_PDFA1'));
    });
  }

  it.skipIf(!official)('the attached XML is valid against the Factur-X EN 16931 schema', async () => {
    const pdf = await renderDocument('zugferd', cases['10 items']);
    const { valid, errors } = validateXml(detachFile(pdf, 'factur-x.xml'), CII_XSD);
    expect(valid, errors).toBe(true);
  });

  it('a seller name with XML characters gives a well-formed XMP in the one-pass PDF/A too', async () => {
    const pdf = await renderInvoicePdf(makeDocumentInput({ seller: { name: 'A & B <Söhne> "GmbH"' } }), { pdfA: true });
    const xmp = xmpOf(pdf);
    expect(xmp).toContain('<rdf:li>A &amp; B &lt;Söhne&gt; &quot;GmbH&quot;</rdf:li>');
    expect(xmp).toContain('<pdfaid:part>3</pdfaid:part>');
  });
});
