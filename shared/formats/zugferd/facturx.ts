/**
 * ZUGFeRD 2.x / Factur-X hybrid invoice: a PDF/A-3b for people with the EN 16931 CII XML
 * embedded for machines.
 *
 * The XML is attached as "factur-x.xml" (MIME text/xml, /AFRelationship /Alternative: the XML
 * is an equivalent representation of the visible invoice), listed both in the EmbeddedFiles
 * name tree and in the catalog's /AF array as PDF/A-3 requires, and announced in the XMP
 * packet (pdfaid part 3 / B plus the fx extension schema).
 *
 * pdf-lib post-processes pdfkit's output rather than pdfkit attaching the file itself: the
 * contract takes an existing PDF buffer, and the XMP must be rewritten anyway (see pdfA.ts).
 * The file objects are written by embeddedFile.ts (see there why not pdf-lib's attach()).
 */
import { PDFName, PDFRawStream, decodePDFRawStream } from '@cantoo/pdf-lib';
import type { DocumentInput } from '../../domain/invoiceView';
import { formatDate } from '../pdf/format';
import { renderInvoicePdf } from '../pdf/invoicePdf';
import { buildXmp, loadPdf, readInfo, savePdf, setXmp } from '../pdf/pdfA';
import { documentNumber, documentTitle } from '../pdf/invoiceHeader';
import { displayName } from '../pdf/parties';
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
  addAssociatedFile(pdf, {
    name: FACTURX_FILENAME,
    bytes: new Uint8Array(Buffer.from(ciiXml, 'utf8')),
    mimeType: 'text/xml',
    description: `Factur-X/ZUGFeRD ${profile} invoice data`,
    relationship: 'Alternative',
    date: stamp,
  });

  pdf.setTitle(meta.title);
  pdf.setAuthor(meta.sellerName);
  pdf.setSubject(`${meta.title} vom ${formatDate(meta.issueDate)}`);
  pdf.setKeywords(['Factur-X', 'ZUGFeRD', profile, meta.invoiceNumber]);
  pdf.setModificationDate(stamp);

  setXmp(pdf, buildXmp(readInfo(pdf), { part: 3, conformance: 'B' }, facturXDescriptions(profile)));
  return savePdf(pdf);
}

/** Visible invoice (PDF/A-3b) with the CII XML embedded: what GET …/zugferd returns. */
export async function renderZugferdPdf(input: DocumentInput, ciiXml: string): Promise<Buffer> {
  const number = documentNumber(input);
  if (input.invoice.status === 'entwurf' || !number) {
    // decisions.md: ZUGFeRD needs a finalized invoice; the API answers 400 before calling us.
    throw new Error('renderZugferdPdf: a draft has no invoice number and cannot be an e-invoice');
  }
  const pdf = await renderInvoicePdf(input, { pdfA: true });
  return embedFacturX(pdf, ciiXml, {
    invoiceNumber: number,
    title: documentTitle(input),
    sellerName: displayName(input.seller),
    issueDate: input.invoice.issueDate,
    profile: 'EN 16931',
  });
}
