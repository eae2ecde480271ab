/**
 * First-page header: letterhead, address window (DIN 5008 position), the facts block
 * (number, dates, references) and the document title.
 */
import type { DocumentInput } from '../../domain/invoiceView';
import { addDays, formatDate } from './format';
import { CANCELLED_LABEL, DRAFT_LABEL, DRAFT_NUMBER, TYPE_TEXTS } from './invoiceTexts';
import { COLOR, CONTENT_LEFT, CONTENT_RIGHT, CONTENT_WIDTH, fitLine, hRule, setStyle, textAt } from './layout';
import { displayName, recipientLines, sellerContactLines, senderLine } from './parties';

/** Top of the address window: 45 mm from the top edge (DIN 5008 form B). */
const WINDOW_TOP = 128;
const WINDOW_WIDTH = 240;
const FACTS_WIDTH = 225;
const FACTS_LABEL_WIDTH = 100;

/** Due date as printed: the stored one, else issue date + payment term. */
export function effectiveDueDate(input: DocumentInput): string | null {
  const { invoice } = input;
  if (invoice.dueDate) return invoice.dueDate;
  if (invoice.paymentTermDays != null && invoice.type !== 'angebot') {
    return addDays(documentDate(input), invoice.paymentTermDays);
  }
  return null;
}

/** Incoming invoices are dated by the supplier; everything else by our issue date. */
export function documentDate(input: DocumentInput): string {
  const { invoice } = input;
  return (invoice.type === 'eingangsrechnung' && invoice.invoiceDate) || invoice.issueDate;
}

export function documentNumber(input: DocumentInput): string | null {
  const { invoice } = input;
  if (invoice.type === 'eingangsrechnung') return invoice.invoiceNumber || invoice.number;
  return invoice.number;
}

/** "Rechnung RE-2026-00001", "Rechnung (ENTWURF)". */
export function documentTitle(input: DocumentInput): string {
  const title = TYPE_TEXTS[input.invoice.type].title;
  const number = documentNumber(input);
  if (input.invoice.status === 'entwurf') return `${title} (${DRAFT_LABEL})`;
  return number ? `${title} ${number}` : title;
}

function facts(input: DocumentInput): Array<[string, string]> {
  const { invoice } = input;
  const texts = TYPE_TEXTS[invoice.type];
  const number = documentNumber(input);
  const rows: Array<[string, string]> = [];
  rows.push([texts.numberLabel, number ?? (invoice.status === 'entwurf' ? DRAFT_NUMBER : '—')]);
  rows.push([texts.dateLabel, formatDate(documentDate(input))]);
  if (invoice.type !== 'angebot') {
    // § 11 Abs. 1 Z 4 UStG AT / § 14 Abs. 4 Nr. 6 UStG DE: the date of supply, or the period a
    // service covered, must be stated; without a separate date it is the issue date.
    if (invoice.serviceDate && invoice.serviceEndDate) {
      rows.push(['Leistungszeitraum', `${formatDate(invoice.serviceDate)} – ${formatDate(invoice.serviceEndDate)}`]);
    } else {
      rows.push(['Leistungsdatum', formatDate(invoice.serviceDate ?? documentDate(input))]);
    }
  }
  const due = effectiveDueDate(input);
  if (due && invoice.type !== 'gutschrift') rows.push([texts.dueLabel, formatDate(due)]);
  if (invoice.type === 'gutschrift' && invoice.relatedInvoiceNumber) {
    rows.push(['Zu Rechnung', invoice.relatedInvoiceNumber]);
  }
  if (invoice.type === 'eingangsrechnung') {
    if (invoice.source) rows.push(['Quelle', invoice.source]);
    if (invoice.externalId) rows.push(['Externe ID', invoice.externalId]);
  }
  for (const [key, value] of Object.entries(invoice.customFields ?? {})) {
    if (value != null && String(value).trim() !== '') rows.push([key, String(value)]);
  }
  return rows;
}

/** Letterhead; returns the y below it. */
function drawLetterhead(doc: PDFKit.PDFDocument, input: DocumentInput): number {
  const { seller } = input;
  setStyle(doc, { font: 'bold', size: 15 });
  doc.text(displayName(seller), CONTENT_LEFT, 40, { width: CONTENT_WIDTH - 210 });
  const nameBottom = doc.y;
  const contact = sellerContactLines(seller);
  setStyle(doc, { size: 8, color: COLOR.muted });
  doc.text(contact.join('\n'), CONTENT_RIGHT - 200, 40, { width: 200, align: 'right', lineGap: 1 });
  return Math.max(nameBottom, doc.y);
}

/** Address window; returns the y below it. */
function drawRecipient(doc: PDFKit.PDFDocument, input: DocumentInput, top: number): number {
  const { invoice, seller } = input;
  const sender = fitLine(doc, senderLine(seller), WINDOW_WIDTH, 6.5, 5);
  textAt(doc, sender.text, CONTENT_LEFT, top, { size: sender.size, color: COLOR.muted, width: WINDOW_WIDTH });
  hRule(doc, top + 9, CONTENT_LEFT, CONTENT_LEFT + WINDOW_WIDTH, COLOR.faint);
  let y = top + 16;
  if (invoice.type === 'eingangsrechnung') {
    textAt(doc, 'Lieferant', CONTENT_LEFT, y, { size: 7.5, color: COLOR.muted });
    y += 11;
  }
  const party = invoice.customer;
  if (!party) {
    setStyle(doc, { size: 10, color: COLOR.muted });
    doc.text(invoice.type === 'eingangsrechnung' && invoice.supplierId ? `Lieferant ${invoice.supplierId}` : '—', CONTENT_LEFT, y, {
      width: WINDOW_WIDTH,
    });
    return doc.y;
  }
  const { strong, normal } = recipientLines(party);
  setStyle(doc, { font: 'bold', size: 10 });
  doc.text(strong.join('\n'), CONTENT_LEFT, y, { width: WINDOW_WIDTH });
  setStyle(doc, { size: 10 });
  doc.text(normal.join('\n'), CONTENT_LEFT, doc.y, { width: WINDOW_WIDTH, lineGap: 1 });
  return doc.y;
}

/** Facts block right of the window; returns the y below it. */
function drawFacts(doc: PDFKit.PDFDocument, input: DocumentInput, top: number): number {
  const x = CONTENT_RIGHT - FACTS_WIDTH;
  const valueWidth = FACTS_WIDTH - FACTS_LABEL_WIDTH;
  let y = top + 16;
  for (const [label, value] of facts(input)) {
    setStyle(doc, { size: 8.5, color: COLOR.muted });
    const labelHeight = doc.heightOfString(label, { width: FACTS_LABEL_WIDTH - 4 });
    doc.text(label, x, y, { width: FACTS_LABEL_WIDTH - 4 });
    setStyle(doc, { size: 8.5 });
    const valueHeight = doc.heightOfString(value, { width: valueWidth });
    doc.text(value, x + FACTS_LABEL_WIDTH, y, { width: valueWidth, align: 'right' });
    y += Math.max(labelHeight, valueHeight) + 3;
  }
  return y;
}

function drawTitle(doc: PDFKit.PDFDocument, input: DocumentInput, top: number): number {
  const { invoice } = input;
  const texts = TYPE_TEXTS[invoice.type];
  const number = documentNumber(input);
  setStyle(doc, { font: 'bold', size: 17 });
  const main = invoice.status === 'entwurf' ? texts.title : number ? `${texts.title} ${number}` : texts.title;
  doc.text(main, CONTENT_LEFT, top, { lineBreak: false, continued: false });
  let labelX = CONTENT_LEFT + doc.widthOfString(main) + 12;
  const labels: string[] = [];
  if (invoice.status === 'entwurf') labels.push(DRAFT_LABEL);
  if (invoice.status === 'storniert') labels.push(CANCELLED_LABEL);
  for (const label of labels) {
    setStyle(doc, { font: 'bold', size: 11, color: COLOR.accent });
    const w = doc.widthOfString(label);
    doc.save().lineWidth(1).strokeColor(COLOR.accent).rect(labelX, top + 1, w + 10, 18).stroke().restore();
    doc.text(label, labelX + 5, top + 4, { lineBreak: false });
    labelX += w + 18;
  }
  let y = top + 26;
  const sub: string[] = [];
  if (invoice.type === 'gutschrift' && invoice.relatedInvoiceNumber) {
    sub.push(`Gutschrift (Rechnungskorrektur) zur Rechnung Nr. ${invoice.relatedInvoiceNumber}`);
  }
  if (invoice.type === 'eingangsrechnung') {
    sub.push('Erfasster Eingangsbeleg; maßgeblich ist die Originalrechnung des Lieferanten.');
  }
  if (invoice.status === 'entwurf') {
    sub.push('Entwurf – noch nicht versendet; die Nummer wird beim Versand vergeben.');
  }
  for (const line of sub) {
    setStyle(doc, { size: 9.5 });
    doc.text(line, CONTENT_LEFT, y, { width: CONTENT_WIDTH });
    y = doc.y + 2;
  }
  return y;
}

/** Draws the whole first-page header and leaves doc.y where the item table starts. */
export function drawInvoiceHeader(doc: PDFKit.PDFDocument, input: DocumentInput): void {
  // The window sits at its DIN position unless a long letterhead pushes it down.
  const top = Math.max(WINDOW_TOP, drawLetterhead(doc, input) + 10);
  const windowBottom = drawRecipient(doc, input, top);
  const factsBottom = drawFacts(doc, input, top);
  const titleTop = Math.max(windowBottom, factsBottom, top + 110) + 22;
  doc.y = drawTitle(doc, input, titleTop) + 10;
  doc.x = CONTENT_LEFT;
}
