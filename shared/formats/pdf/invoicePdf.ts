/**
 * Invoice, quote and credit-note PDF (A4) with the contents § 11 UStG (AT) / § 14 UStG (DE)
 * require. Deterministic: its dates and file ID come from invoice.updatedAt, so a cached or golden
 * copy compares byte for byte.
 */
import type { DocumentInput } from '../../domain/invoiceView';
import { formatDate } from './format';
import { documentDate, documentTitle, drawInvoiceHeader } from './invoiceHeader';
import { drawInvoiceSummary } from './invoiceSummary';
import { DRAFT_LABEL, TYPE_TEXTS } from './invoiceTexts';
import { drawItemTable } from './itemTable';
import { CONTENT_LEFT, CONTENT_WIDTH, CREATOR, PRODUCER, createDocument, setStyle, toBuffer } from './layout';
import { renderMarkdown } from './markdownToPdf';
import { drawPageDecorations, installDraftWatermark } from './pageDecorations';
import { displayName } from './parties';
import { attachFile, buildXmp, usePdfA3Metadata, type AssociatedFile } from './pdfA';

export interface RenderOptions {
  /** PDF/A-3b output (embedded fonts, sRGB output intent, XMP identification); used for ZUGFeRD. */
  pdfA?: boolean;
  /**
   * PDF/A-3 only: files attached to the document (/AF and EmbeddedFiles; `date` defaults to the
   * document's), info entries that replace the invoice's own, and rdf:Description elements added
   * to the XMP (escaped by the caller). How ZUGFeRD writes factur-x.xml in the same pass.
   */
  pdfA3?: {
    files?: Array<Omit<AssociatedFile, 'date'> & { date?: Date }>;
    info?: { subject?: string; keywords?: string };
    xmpDescriptions?: string[];
  };
}

function stableDate(iso: string | null | undefined): Date {
  const d = iso ? new Date(iso) : new Date(NaN);
  // A missing timestamp must not make the output depend on the clock.
  return Number.isNaN(d.getTime()) ? new Date(0) : d;
}

export async function renderInvoicePdf(input: DocumentInput, opts: RenderOptions = {}): Promise<Buffer> {
  const { invoice, seller } = input;
  const title = documentTitle(input);
  const buyer = invoice.customer ? displayName(invoice.customer) : '';
  const info = {
    title,
    author: displayName(seller),
    subject: opts.pdfA3?.info?.subject ?? `${title} vom ${formatDate(documentDate(input))}${buyer ? ` an ${buyer}` : ''}`,
    keywords: opts.pdfA3?.info?.keywords ?? TYPE_TEXTS[invoice.type].title,
    date: stableDate(invoice.updatedAt ?? invoice.createdAt),
  };
  const doc = createDocument(info, opts.pdfA === true);
  if (opts.pdfA) {
    // The XMP is written by pdfkit from the same values as the info dictionary (createDocument),
    // escaped: no pdf-lib pass over the finished file.
    const xmpInfo = {
      ...info,
      creatorTool: CREATOR,
      producer: PRODUCER,
      createDate: info.date,
      modifyDate: info.date,
    };
    usePdfA3Metadata(doc, () => buildXmp(xmpInfo, { part: 3, conformance: 'B' }, opts.pdfA3?.xmpDescriptions));
    for (const file of opts.pdfA3?.files ?? []) attachFile(doc, { ...file, date: file.date ?? info.date });
  }

  if (invoice.status === 'entwurf') installDraftWatermark(doc, DRAFT_LABEL);
  doc.addPage();

  drawInvoiceHeader(doc, input);
  drawItemTable(doc, invoice.items, invoice.currency);
  drawInvoiceSummary(doc, input);

  if (invoice.type === 'angebot' && invoice.detailsMarkdown?.trim()) {
    doc.addPage();
    setStyle(doc, { font: 'bold', size: 8.5 });
    doc.text(`Anlage zu: ${title}`, CONTENT_LEFT, doc.y, { width: CONTENT_WIDTH });
    doc.y += 6;
    renderMarkdown(doc, invoice.detailsMarkdown);
  }

  drawPageDecorations(doc, {
    seller,
    runningHeader: `${title} vom ${formatDate(documentDate(input))} · ${displayName(seller)}`,
    pageLabel: invoice.status === 'entwurf' ? DRAFT_LABEL : undefined,
  });

  return toBuffer(doc);
}
