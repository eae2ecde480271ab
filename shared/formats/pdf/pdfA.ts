/**
 * PDF/A metadata: the XMP packet must agree with the info dictionary, and pdfkit writes it
 * unescaped ("Müller & Söhne" gives invalid XML), so it is rebuilt here from the info
 * dictionary, escaped, and swapped in with pdf-lib. The Factur-X writer adds its extension schema.
 */
import { PDFDocument, PDFName, PDFRef } from '@cantoo/pdf-lib';
import { escapeAttr } from '../xml';

export interface XmpInfo {
  title?: string;
  author?: string;
  subject?: string;
  keywords?: string;
  creatorTool?: string;
  producer?: string;
  createDate?: Date;
  modifyDate?: Date;
}

function xmpDate(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * A complete XMP packet. `extraDescriptions` are additional rdf:Description elements (e.g. the
 * Factur-X extension schema) inserted verbatim: the caller is responsible for their escaping.
 */
export function buildXmp(info: XmpInfo, pdfa: { part: number; conformance: string }, extraDescriptions: string[] = []): string {
  const e = escapeAttr;
  const dc: string[] = [];
  if (info.title) dc.push(`<dc:title><rdf:Alt><rdf:li xml:lang="x-default">${e(info.title)}</rdf:li></rdf:Alt></dc:title>`);
  if (info.author) dc.push(`<dc:creator><rdf:Seq><rdf:li>${e(info.author)}</rdf:li></rdf:Seq></dc:creator>`);
  if (info.subject) dc.push(`<dc:description><rdf:Alt><rdf:li xml:lang="x-default">${e(info.subject)}</rdf:li></rdf:Alt></dc:description>`);
  const xmp: string[] = [];
  if (info.createDate) xmp.push(`<xmp:CreateDate>${xmpDate(info.createDate)}</xmp:CreateDate>`);
  if (info.modifyDate) {
    xmp.push(`<xmp:ModifyDate>${xmpDate(info.modifyDate)}</xmp:ModifyDate>`);
    xmp.push(`<xmp:MetadataDate>${xmpDate(info.modifyDate)}</xmp:MetadataDate>`);
  }
  if (info.creatorTool) xmp.push(`<xmp:CreatorTool>${e(info.creatorTool)}</xmp:CreatorTool>`);
  const pdf: string[] = [];
  if (info.producer) pdf.push(`<pdf:Producer>${e(info.producer)}</pdf:Producer>`);
  if (info.keywords) pdf.push(`<pdf:Keywords>${e(info.keywords)}</pdf:Keywords>`);

  const block = (ns: string, body: string[]) =>
    body.length ? `  <rdf:Description rdf:about="" ${ns}>\n    ${body.join('\n    ')}\n  </rdf:Description>\n` : '';

  return (
    `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>\n` +
    `<x:xmpmeta xmlns:x="adobe:ns:meta/">\n` +
    `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n` +
    block('xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/"', [
      `<pdfaid:part>${pdfa.part}</pdfaid:part>`,
      `<pdfaid:conformance>${e(pdfa.conformance)}</pdfaid:conformance>`,
    ]) +
    block('xmlns:dc="http://purl.org/dc/elements/1.1/"', dc) +
    block('xmlns:xmp="http://ns.adobe.com/xap/1.0/"', xmp) +
    block('xmlns:pdf="http://ns.adobe.com/pdf/1.3/"', pdf) +
    extraDescriptions.join('\n') +
    `</rdf:RDF>\n` +
    `</x:xmpmeta>\n` +
    `<?xpacket end="w"?>`
  );
}

export function loadPdf(bytes: Uint8Array): Promise<PDFDocument> {
  // updateMetadata: false keeps pdf-lib from stamping its own producer and the current time,
  // which would break both the Info ↔ XMP agreement and byte-for-byte reproducibility.
  return PDFDocument.load(bytes, { updateMetadata: false });
}

export function readInfo(pdf: PDFDocument): XmpInfo {
  return {
    title: pdf.getTitle(),
    author: pdf.getAuthor(),
    subject: pdf.getSubject(),
    keywords: pdf.getKeywords(),
    creatorTool: pdf.getCreator(),
    producer: pdf.getProducer(),
    createDate: pdf.getCreationDate(),
    modifyDate: pdf.getModificationDate(),
  };
}

/** Replaces the catalog's /Metadata stream. PDF/A forbids filters on it, so it stays uncompressed. */
export function setXmp(pdf: PDFDocument, xml: string): void {
  const old = pdf.catalog.get(PDFName.of('Metadata'));
  if (old instanceof PDFRef) pdf.context.delete(old);
  const stream = pdf.context.stream(new Uint8Array(Buffer.from(xml, 'utf8')), { Type: 'Metadata', Subtype: 'XML' });
  pdf.catalog.set(PDFName.of('Metadata'), pdf.context.register(stream));
}

export async function savePdf(pdf: PDFDocument): Promise<Buffer> {
  // Classic xref table, no object streams: readable by every PDF/A validator and by poppler.
  const bytes = await pdf.save({ useObjectStreams: false, addDefaultPage: false, updateFieldAppearances: false });
  return Buffer.from(bytes);
}

/** Rewrites the XMP of a pdfkit PDF/A-3b file so it is well-formed and matches the info dictionary. */
export async function finalizePdfA3b(bytes: Uint8Array): Promise<Buffer> {
  const pdf = await loadPdf(bytes);
  setXmp(pdf, buildXmp(readInfo(pdf), { part: 3, conformance: 'B' }));
  return savePdf(pdf);
}
