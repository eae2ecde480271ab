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
import { CONTENT_LEFT, CONTENT_WIDTH, createDocument, setStyle, toBuffer } from './layout';
import { renderMarkdown } from './markdownToPdf';
import { drawPageDecorations, installDraftWatermark } from './pageDecorations';
import { displayName } from './parties';
import { finalizePdfA3b } from './pdfA';

export interface RenderOptions {
  /** PDF/A-3b output (embedded fonts, sRGB output intent, XMP identification); used for ZUGFeRD. */
  pdfA?: boolean;
  /**
   * false: leave pdfkit's own XMP in place (no pdf-lib pass). Only for a caller that rewrites the
   * XMP itself, as embedFacturX does: loading and saving the file once instead of twice.
   */
  finalizeXmp?: boolean;
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
  const doc = createDocument(
    {
      title,
      author: displayName(seller),
      subject: `${title} vom ${formatDate(documentDate(input))}${buyer ? ` an ${buyer}` : ''}`,
      keywords: TYPE_TEXTS[invoice.type].title,
      date: stableDate(invoice.updatedAt ?? invoice.createdAt),
    },
    opts.pdfA === true,
  );

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

  const bytes = await toBuffer(doc);
  return opts.pdfA && opts.finalizeXmp !== false ? finalizePdfA3b(bytes) : bytes;
}
