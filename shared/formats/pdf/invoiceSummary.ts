/**
 * Everything after the item table: totals with the VAT per rate, payments received, the
 * reverse-charge note and the other VAT wording per category (legalNotes.ts), payment terms, notes and the invoice's footer text.
 */
import type { DocumentInput } from '../../domain/invoiceView';
import { dec } from '../../domain/money';
import { drawEpcQr, epcQrOf } from './epcQrCode';
import { formatDate, formatMoney, formatPercent, isZero } from './format';
import { documentNumber, effectiveDueDate } from './invoiceHeader';
import { TOTAL_LABELS, paymentMethodLabel } from './invoiceTexts';
import { COLOR, CONTENT_LEFT, CONTENT_RIGHT, CONTENT_WIDTH, ensureSpace, hRule, setStyle, type TextStyle } from './layout';
import { isSmallBusinessInvoice, REVERSE_CHARGE_TITLE, reverseCharge, reverseChargeText, VAT_NOTES_TITLE, vatInEur, vatNotes } from './legalNotes';
import { formatIban } from './parties';
import { breakLongRuns } from './textBreaks';

const TOTALS_WIDTH = 290;
const VALUE_WIDTH = 95;
const LINE = 14;

/** Sign flip on the decimal string itself (no float round trip). */
function negate(value: string): string {
  const v = value.trim();
  return v.startsWith('-') ? v.slice(1) : `-${v.replace(/^\+/, '')}`;
}

type TotalLine = { label: string; value: string; style?: TextStyle; ruleAbove?: boolean };

function totalLines(input: DocumentInput): TotalLine[] {
  const { invoice } = input;
  const money = (v: string) => formatMoney(v, invoice.currency);
  const lines: TotalLine[] = [{ label: TOTAL_LABELS.net, value: money(invoice.totalNet) }];
  // A small business charges no VAT: its invoice shows no VAT lines at all, not even 0 %.
  if (!isSmallBusinessInvoice(input)) {
    const rates = [...invoice.taxBreakdown].sort((a, b) => Number(b.taxRate) - Number(a.taxRate));
    for (const row of rates) {
      lines.push({ label: TOTAL_LABELS.taxPerRate(formatPercent(row.taxRate), money(row.net)), value: money(row.tax) });
    }
    lines.push({ label: TOTAL_LABELS.tax, value: money(invoice.totalTax) });
  }
  lines.push({ label: TOTAL_LABELS.gross, value: money(invoice.totalGross), style: { font: 'bold', size: 10.5 }, ruleAbove: true });
  const hasPayments = invoice.payments.length > 0 || !isZero(invoice.amountPaid);
  if (hasPayments && invoice.type !== 'angebot') {
    lines.push({ label: TOTAL_LABELS.paid, value: isZero(invoice.amountPaid) ? money('0') : money(negate(invoice.amountPaid)) });
    lines.push({ label: TOTAL_LABELS.due, value: money(invoice.amountDue), style: { font: 'bold', size: 10 } });
  }
  return lines;
}

function drawTotals(doc: PDFKit.PDFDocument, input: DocumentInput): void {
  const lines = totalLines(input);
  ensureSpace(doc, lines.length * LINE + 10);
  const x = CONTENT_RIGHT - TOTALS_WIDTH;
  let y = doc.y + 2;
  for (const line of lines) {
    if (line.ruleAbove) {
      hRule(doc, y - 2, x, CONTENT_RIGHT, COLOR.text, 0.8);
      y += 2;
    }
    setStyle(doc, line.style ?? { size: 9 });
    doc.text(line.label, x, y, { width: TOTALS_WIDTH - VALUE_WIDTH - 6, lineBreak: false });
    doc.text(line.value, CONTENT_RIGHT - VALUE_WIDTH, y, { width: VALUE_WIDTH, align: 'right', lineBreak: false });
    y += LINE;
  }
  doc.x = CONTENT_LEFT;
  doc.y = y + 6;
}

function drawPayments(doc: PDFKit.PDFDocument, input: DocumentInput): void {
  const { invoice } = input;
  if (invoice.payments.length === 0) return;
  const lines = [...invoice.payments]
    .sort((a, b) => a.date.localeCompare(b.date))
    .map((p) => `${formatDate(p.date)}  ${paymentMethodLabel(p.method)}: ${formatMoney(p.amount, invoice.currency)}`);
  heading(doc, 'Zahlungseingänge');
  paragraph(doc, lines.join('\n'), { size: 8.5 });
}

function heading(doc: PDFKit.PDFDocument, text: string): void {
  ensureSpace(doc, 34);
  setStyle(doc, { font: 'bold', size: 9.5 });
  doc.text(text, CONTENT_LEFT, doc.y + 4, { width: CONTENT_WIDTH });
  doc.y += 1;
}

/** Free text; it may run across pages (pdfkit continues it on the next one). */
function paragraph(doc: PDFKit.PDFDocument, text: string, style: TextStyle = { size: 9.5 }): void {
  setStyle(doc, style);
  ensureSpace(doc, Math.min(doc.heightOfString(text, { width: CONTENT_WIDTH }), 3 * doc.currentLineHeight(true)));
  doc.text(text, CONTENT_LEFT, doc.y, { width: CONTENT_WIDTH, lineGap: 1.5 });
  doc.y += 6;
}

function paymentTerms(input: DocumentInput): string | null {
  const { invoice, seller } = input;
  const money = (v: string) => formatMoney(v, invoice.currency);
  if (invoice.type === 'angebot') {
    const parts: string[] = [];
    if (invoice.dueDate) parts.push(`Dieses Angebot ist gültig bis ${formatDate(invoice.dueDate)}.`);
    if (invoice.paymentTermDays != null) {
      parts.push(
        invoice.paymentTermDays === 0
          ? 'Zahlungsbedingungen: zahlbar sofort nach Rechnungserhalt ohne Abzug.'
          : `Zahlungsbedingungen: zahlbar innerhalb von ${invoice.paymentTermDays} Tagen nach Rechnungserhalt ohne Abzug.`,
      );
    }
    return parts.length ? parts.join(' ') : null;
  }
  if (invoice.type === 'gutschrift' || invoice.status === 'storniert') return null;
  // From the amount due, not the status: the CII and ebInterface writers decide "Bereits vollständig
  // bezahlt." the same way, so a ZUGFeRD PDF and its XML cannot disagree. Served documents never get
  // here with a payment: they show the invoice as issued (asIssued in shared/documents/renderDocument.ts).
  if (dec(invoice.amountDue).lte(0)) return 'Der Rechnungsbetrag ist vollständig beglichen. Vielen Dank!';
  const due = effectiveDueDate(input);
  const parts: string[] = [];
  if (invoice.paymentTermDays === 0) parts.push('Zahlbar sofort ohne Abzug.');
  else if (invoice.paymentTermDays != null && due) {
    parts.push(`Zahlungsziel: ${invoice.paymentTermDays} Tage, fällig am ${formatDate(due)}.`);
  } else if (due) parts.push(`Fällig am ${formatDate(due)}.`);
  if (invoice.type === 'rechnung' && seller.iban) {
    const number = documentNumber(input);
    const reference = number ? `der Rechnungsnummer ${number}` : 'der Rechnungsnummer';
    parts.push(
      `Bitte überweisen Sie ${money(invoice.amountDue)} unter Angabe ${reference} auf das Konto ` +
        `IBAN ${formatIban(seller.iban)}${seller.bic ? `, BIC ${seller.bic}` : ''}.`,
    );
  }
  return parts.length ? parts.join(' ') : null;
}

/** Draws everything below the item table. */
export function drawInvoiceSummary(doc: PDFKit.PDFDocument, input: DocumentInput): void {
  const { invoice } = input;
  drawTotals(doc, input);
  drawPayments(doc, input);

  const rc = reverseCharge(input);
  if (rc.applies && invoice.customer?.vatId) {
    heading(doc, REVERSE_CHARGE_TITLE);
    paragraph(doc, reverseChargeText(rc, invoice.customer.vatId), { size: 9 });
  }
  const inEur = vatInEur(input);
  if (inEur) paragraph(doc, inEur, { size: 9 });
  const notes = vatNotes(input);
  if (notes.length > 0) {
    heading(doc, VAT_NOTES_TITLE);
    for (const note of notes) paragraph(doc, breakLongRuns(note), { size: 9 });
  }

  if (invoice.type === 'angebot' && invoice.detailsMarkdown?.trim()) {
    paragraph(doc, 'Die ausführliche Leistungsbeschreibung finden Sie in der Anlage zu diesem Angebot.', { size: 9 });
  }

  const terms = paymentTerms(input);
  if (terms) {
    heading(doc, invoice.type === 'angebot' ? 'Gültigkeit und Zahlungsbedingungen' : 'Zahlungsbedingungen');
    paragraph(doc, terms, { size: 9 });
    // The code carries the same payee, amount and reference (the invoice number) as the sentence above.
    const qr = epcQrOf(input);
    if (qr) drawEpcQr(doc, qr);
  }
  // Free user text: long runs without spaces get break opportunities (textBreaks.ts).
  if (invoice.notes?.trim()) {
    doc.y += 4;
    paragraph(doc, breakLongRuns(invoice.notes.trim()));
  }
  if (invoice.footerText?.trim()) {
    doc.y += 4;
    paragraph(doc, breakLongRuns(invoice.footerText.trim()), { size: 8.5, color: COLOR.muted });
  }
}
