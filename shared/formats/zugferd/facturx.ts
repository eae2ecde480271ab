/**
 * ZUGFeRD 2.x / Factur-X: a PDF/A-3b with the EN 16931 CII XML attached as "factur-x.xml"
 * (/AFRelationship /Alternative, in EmbeddedFiles and the catalog's /AF, announced in the XMP).
 * `renderZugferdPdf` has pdfkit write the attachment and the XMP while it renders the invoice
 * (one pass); `embedFacturX` does the same to finished PDF/A-3 bytes with pdf-lib
 * (docs/pdf-and-zugferd.md, "ZUGFeRD / Factur-X").
 */
import { PDFName, PDFRawStream, decodePDFRawStream } from '@cantoo/pdf-lib';
import type { DocumentInput } from '../../domain/invoiceView';
import { formatDate } from '../pdf/format';
import { renderInvoicePdf } from '../pdf/invoicePdf';
import { buildXmp, loadPdf, readInfo, savePdf, setXmp } from '../pdf/pdfA';
import { documentNumber, documentTitle } from '../pdf/invoiceHeader';
import { addAssociatedFile, removeAssociatedFile } from './embeddedFile';
import { FACTURX_FILENAME, facturXDescriptions, type FacturXProfile } from './facturxXmp';

export interface FacturXMeta {
  invoiceNumber: string;
  /** Document title, e.g. "Rechnung RE-2026-00001"; becomes Info /Title and dc:title. */
  title: string;
  sellerName: string;
  /** YYYY-MM-DD */
  issueDate: string;
  profile?: 'EN 16931';
}

/** Reads the catalog's XMP packet as text ("" when there is none). */
function existingXmp(pdf: Awaited<ReturnType<typeof loadPdf>>): string {
  const stream = pdf.catalog.lookup(PDFName.of('Metadata'));
  if (!(stream instanceof PDFRawStream)) return '';
  return Buffer.from(decodePDFRawStream(stream).decode()).toString('utf8');
}

function assertCiiXml(xml: string): void {
  // The CII writer owns validity (XSD + schematron); this only catches a wrong argument,
  // e.g. an empty string or an ebInterface document passed by mistake.
  if (!/<(?:[\w-]+:)?CrossIndustryInvoice[\s>]/.test(xml)) {
    throw new Error('embedFacturX: the XML is not a UN/CEFACT CrossIndustryInvoice document');
  }
}

export async function embedFacturX(pdfA3: Buffer, ciiXml: string, meta: FacturXMeta): Promise<Buffer> {
  assertCiiXml(ciiXml);
  const profile: FacturXProfile = meta.profile ?? 'EN 16931';
  const pdf = await loadPdf(pdfA3);

  // Only a PDF/A-3 base keeps the promise the XMP makes (embedded fonts, output intent).
  if (!/pdfaid:part(?:>|="|=')\s*3/.test(existingXmp(pdf))) {
    throw new Error('embedFacturX needs a PDF/A-3 input: render it with renderInvoicePdf(input, { pdfA: true })');
  }

  // The file's own timestamp keeps the output reproducible (no "now" anywhere).
  const stamp = pdf.getModificationDate() ?? pdf.getCreationDate() ?? new Date(0);
  removeAssociatedFile(pdf, FACTURX_FILENAME);
  addAssociatedFile(pdf, { name: FACTURX_FILENAME, bytes: new Uint8Array(Buffer.from(ciiXml, 'utf8')), ...FACTURX_FILE(profile), date: stamp });

  const info = facturXInfo({ ...meta, profile });
  pdf.setTitle(meta.title);
  pdf.setAuthor(meta.sellerName);
  pdf.setSubject(info.subject);
  pdf.setKeywords([info.keywords]);
  pdf.setModificationDate(stamp);

  setXmp(pdf, buildXmp(readInfo(pdf), { part: 3, conformance: 'B' }, facturXDescriptions(profile)));
  return savePdf(pdf);
}

/** Visible invoice (PDF/A-3b) with the CII XML embedded: what GET …/zugferd returns. */
export async function renderZugferdPdf(input: DocumentInput, ciiXml: string): Promise<Buffer> {
  const number = documentNumber(input);
  if (input.invoice.status === 'entwurf' || !number) {
    // An e-invoice needs the final number; assertRenderable answers 400 before a render is queued.
    throw new Error('renderZugferdPdf: a draft has no invoice number and cannot be an e-invoice');
  }
  assertCiiXml(ciiXml);
  // Written by pdfkit while it renders: a pdf-lib load and save of the finished file (what
  // embedFacturX does) cost about as much as drawing the page. The same objects, info entries
  // and XMP as embedFacturX writes (test/formats/pdf/zugferdOnePass.test.ts).
  const profile: FacturXProfile = 'EN 16931';
  const title = documentTitle(input);
  return renderInvoicePdf(input, {
    pdfA: true,
    pdfA3: {
      files: [{ name: FACTURX_FILENAME, bytes: Buffer.from(ciiXml, 'utf8'), ...FACTURX_FILE(profile) }],
      info: facturXInfo({ invoiceNumber: number, title, issueDate: input.invoice.issueDate, profile }),
      xmpDescriptions: facturXDescriptions(profile),
    },
  });
}

/** The attachment's entries besides name and bytes (its date is the document's). */
const FACTURX_FILE = (profile: FacturXProfile) => ({
  mimeType: 'text/xml',
  description: `Factur-X/ZUGFeRD ${profile} invoice data`,
  relationship: 'Alternative' as const,
});

/** Info /Subject and /Keywords of a Factur-X PDF (Title and Author are the invoice PDF's own). */
function facturXInfo(meta: { invoiceNumber: string; title: string; issueDate: string; profile: FacturXProfile }) {
  return { subject: `${meta.title} vom ${formatDate(meta.issueDate)}`, keywords: ['Factur-X', 'ZUGFeRD', meta.profile, meta.invoiceNumber].join(' ') };
}
