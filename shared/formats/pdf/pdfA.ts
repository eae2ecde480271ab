/**
 * PDF/A metadata: the XMP packet must agree with the info dictionary, and pdfkit writes it
 * unescaped ("Müller & Söhne" gives invalid XML), so it is built here from the same values,
 * escaped, and written by pdfkit in place of its own (`usePdfA3Metadata`); PDF/A-3 associated
 * files (the Factur-X XML) are written into the same pdfkit document (`attachFile`). The
 * pdf-lib helpers below serve `embedFacturX`, which works on finished PDF bytes.
 */
import { createHash } from 'node:crypto';
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

/**
 * Makes pdfkit write `xmp()` (called at end(), after every page and font is done) as the
 * document's XMP packet instead of its own unescaped one: no second pass over the file.
 * PDF/A forbids filters on the metadata stream, so it stays uncompressed.
 */
export function usePdfA3Metadata(document: PDFKit.PDFDocument, xmp: () => string): void {
  type Ref = { compress: boolean; write(b: Uint8Array): void; end(): void };
  const doc = document as unknown as { ref(data: object): Ref; _root: { data: Record<string, unknown> }; endMetadata: () => void };
  doc.endMetadata = () => {
    const ref = doc.ref({ Type: 'Metadata', Subtype: 'XML' });
    ref.compress = false;
    ref.write(Buffer.from(xmp(), 'utf8'));
    ref.end();
    doc._root.data.Metadata = ref;
  };
}

export type AfRelationship = 'Source' | 'Data' | 'Alternative' | 'Supplement' | 'Unspecified';

export interface AssociatedFile {
  /** Printable ASCII (written as a plain string, so `pdfdetach -savefile <name>` finds it). */
  name: string;
  bytes: Uint8Array;
  mimeType: string;
  description: string;
  relationship: AfRelationship;
  /** Creation and modification date of the embedded file. */
  date: Date;
}

/**
 * A PDF/A-3 associated file written by pdfkit itself: the /EmbeddedFile stream (Flate, /Params
 * with Size, the MD5 CheckSum as 16 bytes, dates), a /Filespec with /F, /UF, /Desc and
 * /AFRelationship, listed in the EmbeddedFiles name tree and the catalog's /AF. The same objects
 * `embedFacturX` writes with pdf-lib (zugferd/embeddedFile.ts). pdfkit's own `doc.file()` writes
 * the checksum as 32 hex characters in a literal string, hence this.
 */
export function attachFile(document: PDFKit.PDFDocument, file: AssociatedFile): void {
  if (!/^[\x20-\x7e]+$/.test(file.name) || !/^[\x20-\x7e]*$/.test(file.description))
    throw new Error('attachFile: name and description must be printable ASCII');
  type Ref = { end(data?: Uint8Array): void };
  const doc = document as unknown as {
    ref(data: object): Ref;
    addNamedEmbeddedFile(name: string, ref: Ref): void;
    _root: { data: Record<string, unknown> };
  };
  const stream = doc.ref({
    Type: 'EmbeddedFile',
    // A name: "/" inside it is written #2F.
    Subtype: file.mimeType.replace(/[^!-~]|[#/()<>[\]{}%]/g, (c) => `#${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`),
    Params: {
      Size: file.bytes.length,
      CreationDate: file.date,
      ModDate: file.date,
      CheckSum: new Uint8Array(createHash('md5').update(file.bytes).digest()),
    },
  });
  stream.end(file.bytes);
  const spec = doc.ref({
    Type: 'Filespec',
    F: new String(file.name),
    UF: new String(file.name),
    EF: { F: stream, UF: stream },
    Desc: new String(file.description),
    AFRelationship: file.relationship,
  });
  spec.end();
  doc.addNamedEmbeddedFile(file.name, spec);
  const af = doc._root.data.AF as Ref[] | undefined;
  if (af) af.push(spec);
  else doc._root.data.AF = [spec];
}
