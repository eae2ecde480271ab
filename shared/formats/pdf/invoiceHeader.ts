/**
 * First-page header: letterhead, address window (DIN 5008 position), the facts block
 * (number, dates, references) and the document title.
 */
import type { DocumentInput } from '../../domain/invoiceView';
import { addDays, formatDate } from './format';
import { CANCELLED_LABEL, DRAFT_LABEL, DRAFT_NUMBER, TYPE_TEXTS } from './invoiceTexts';
import { COLOR, CONTENT_BOTTOM, CONTENT_LEFT, CONTENT_RIGHT, CONTENT_WIDTH, MARGIN, fitLine, hRule, setStyle, textAt } from './layout';
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

type Fact = [label: string, value: string];

/** The standard facts (number, dates, references); always in the header. */
function facts(input: DocumentInput): Fact[] {
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
  return rows;
}

function customFacts(input: DocumentInput): Fact[] {
  const rows: Fact[] = [];
  for (const [key, value] of Object.entries(input.invoice.customFields ?? {})) {
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

/**
 * Height the facts block may take below its top. The API allows 50 custom fields of 2,000
 * characters each; without a bound they pushed the title into the footer or off the page.
 */
const FACTS_MAX_HEIGHT = 200;
/** A custom field stays in the header only if its label and value each fit in this many lines. */
const FACT_MAX_LINES = 3;
const FACT_SIZE = 8.5;
const FACT_GAP = 3;
/** Kept free below the facts block on page 1 for the title and the first table rows. */
const TITLE_RESERVE = 140;

function factHeight(doc: PDFKit.PDFDocument, [label, value]: Fact): { height: number; lines: number } {
  const valueWidth = FACTS_WIDTH - FACTS_LABEL_WIDTH;
  setStyle(doc, { size: FACT_SIZE });
  const lineHeight = doc.currentLineHeight(true);
  const height = Math.max(doc.heightOfString(label, { width: FACTS_LABEL_WIDTH - 4 }), doc.heightOfString(value, { width: valueWidth }));
  return { height, lines: Math.round(height / lineHeight) };
}

/**
 * Splits the custom fields into those the header shows and those drawCustomFields prints in
 * full below the title: a field whose label or value needs more than FACT_MAX_LINES lines goes
 * below; short ones stay in the header, in order, until the block would exceed `maxHeight`,
 * and from then on every field goes below, so the remainder keeps the user's order. Nothing
 * is dropped or shortened.
 */
function placeCustomFacts(doc: PDFKit.PDFDocument, standard: Fact[], custom: Fact[], maxHeight: number): { header: Fact[]; below: Fact[] } {
  let used = standard.reduce((sum, f) => sum + factHeight(doc, f).height + FACT_GAP, 0);
  const header: Fact[] = [];
  const below: Fact[] = [];
  let full = false;
  for (const fact of custom) {
    const { height, lines } = factHeight(doc, fact);
    if (!full && lines <= FACT_MAX_LINES && used + height + FACT_GAP <= maxHeight) {
      header.push(fact);
      used += height + FACT_GAP;
    } else {
      if (lines <= FACT_MAX_LINES) full = true;
      below.push(fact);
    }
  }
  return { header, below };
}

/** Facts block right of the window; returns the y below it. */
function drawFacts(doc: PDFKit.PDFDocument, rows: Fact[], top: number): number {
  const x = CONTENT_RIGHT - FACTS_WIDTH;
  const valueWidth = FACTS_WIDTH - FACTS_LABEL_WIDTH;
  let y = top + 16;
  for (const [label, value] of rows) {
    setStyle(doc, { size: FACT_SIZE, color: COLOR.muted });
    const labelHeight = doc.heightOfString(label, { width: FACTS_LABEL_WIDTH - 4 });
    doc.text(label, x, y, { width: FACTS_LABEL_WIDTH - 4 });
    setStyle(doc, { size: FACT_SIZE });
    const valueHeight = doc.heightOfString(value, { width: valueWidth });
    doc.text(value, x + FACTS_LABEL_WIDTH, y, { width: valueWidth, align: 'right' });
    y += Math.max(labelHeight, valueHeight) + FACT_GAP;
  }
  return y;
}

function subtitleLines(input: DocumentInput): string[] {
  const { invoice } = input;
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
  return sub;
}

const TITLE_LINE_HEIGHT = 26;
const SUBTITLE_SIZE = 9.5;

function titleHeight(doc: PDFKit.PDFDocument, input: DocumentInput): number {
  setStyle(doc, { size: SUBTITLE_SIZE });
  return subtitleLines(input).reduce((sum, line) => sum + doc.heightOfString(line, { width: CONTENT_WIDTH }) + 2, TITLE_LINE_HEIGHT);
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
    doc
      .save()
      .lineWidth(1)
      .strokeColor(COLOR.accent)
      .rect(labelX, top + 1, w + 10, 18)
      .stroke()
      .restore();
    doc.text(label, labelX + 5, top + 4, { lineBreak: false });
    labelX += w + 18;
  }
  let y = top + TITLE_LINE_HEIGHT;
  for (const line of subtitleLines(input)) {
    setStyle(doc, { size: SUBTITLE_SIZE });
    doc.text(line, CONTENT_LEFT, y, { width: CONTENT_WIDTH });
    y = doc.y + 2;
  }
  return y;
}

const MORE_FACTS_HEADING = 'Weitere Angaben';
const MORE_FACTS_LABEL_WIDTH = 150;

/**
 * Custom fields that did not fit into the header, in full, as a label/value list across the
 * content width. It may run across pages: a row that does not fit moves whole to the next
 * page; only a row taller than a page (not possible within the API's limits) flows through
 * pdfkit. Returns the y below the list.
 */
function drawCustomFields(doc: PDFKit.PDFDocument, rows: Fact[], top: number): number {
  const valueX = CONTENT_LEFT + MORE_FACTS_LABEL_WIDTH;
  const valueWidth = CONTENT_WIDTH - MORE_FACTS_LABEL_WIDTH;
  const labelWidth = MORE_FACTS_LABEL_WIDTH - 8;
  const measure = ([label, value]: Fact): number => {
    setStyle(doc, { size: FACT_SIZE });
    return Math.max(doc.heightOfString(label, { width: labelWidth }), doc.heightOfString(value, { width: valueWidth }));
  };
  let y = top;
  setStyle(doc, { font: 'bold', size: FACT_SIZE });
  const headingHeight = doc.currentLineHeight(true) + 4;
  // The heading stays with (at least the start of) the first row.
  if (y + headingHeight + Math.min(measure(rows[0]), 40) > CONTENT_BOTTOM) {
    doc.addPage();
    y = doc.y;
  }
  setStyle(doc, { font: 'bold', size: FACT_SIZE });
  doc.text(MORE_FACTS_HEADING, CONTENT_LEFT, y, { width: CONTENT_WIDTH });
  y += headingHeight;
  for (const fact of rows) {
    const [label, value] = fact;
    const height = measure(fact);
    if (y + height > CONTENT_BOTTOM && y > MARGIN.top + 1) {
      doc.addPage();
      y = doc.y;
    }
    setStyle(doc, { size: FACT_SIZE, color: COLOR.muted });
    doc.text(label, CONTENT_LEFT, y, { width: labelWidth });
    setStyle(doc, { size: FACT_SIZE });
    doc.text(value, valueX, y, { width: valueWidth });
    // After a value that flowed onto another page, doc.y is below its last line there.
    y = (height > CONTENT_BOTTOM - MARGIN.top ? doc.y : y + height) + FACT_GAP;
  }
  return y;
}

/** Draws the whole first-page header and leaves doc.y where the item table starts. */
export function drawInvoiceHeader(doc: PDFKit.PDFDocument, input: DocumentInput): void {
  // The window sits at its DIN position unless a long letterhead pushes it down.
  const top = Math.max(WINDOW_TOP, drawLetterhead(doc, input) + 10);
  const windowBottom = drawRecipient(doc, input, top);
  const standard = facts(input);
  // Room for the title and the start of the item table stays on page 1 below the facts.
  const factsMaxHeight = Math.max(0, Math.min(FACTS_MAX_HEIGHT, CONTENT_BOTTOM - TITLE_RESERVE - (top + 16)));
  const custom = placeCustomFacts(doc, standard, customFacts(input), factsMaxHeight);
  const factsBottom = drawFacts(doc, [...standard, ...custom.header], top);
  let titleTop = Math.max(windowBottom, factsBottom, top + 110) + 22;
  // The title is drawn without wrapping, so pdfkit would not move it to a new page itself.
  if (titleTop + titleHeight(doc, input) + 40 > CONTENT_BOTTOM) {
    doc.addPage();
    titleTop = doc.y;
  }
  let y = drawTitle(doc, input, titleTop) + 10;
  if (custom.below.length) y = drawCustomFields(doc, custom.below, y) + 10;
  doc.y = y;
  doc.x = CONTENT_LEFT;
}
