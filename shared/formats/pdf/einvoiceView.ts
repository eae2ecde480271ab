/**
 * A readable rendering of an incoming e-invoice (GET /api/invoices/:id/pdf of an imported
 * invoice): the document's own data as the reader read it from the stored original, not our
 * booked copy, and marked on every page as a rendering. The original stays the invoice (GoBD /
 * BAO § 132: GET …/original). Same page geometry and embedded DejaVu fonts as the invoice PDF.
 * Deterministic: the file's dates are the document's issue date. See docs/e-invoicing-inbound.md.
 */
import type { InboundAddress, InboundInvoice, InboundResult } from '../inbound/types';
import { formatDate } from './format';
import {
  COLOR,
  CONTENT_BOTTOM,
  CONTENT_LEFT,
  CONTENT_RIGHT,
  CONTENT_WIDTH,
  MARGIN,
  createDocument,
  forEachPage,
  hRule,
  setStyle,
  textAt,
  toBuffer,
} from './layout';
import { formatIban } from './parties';

export type ReadEInvoice = Extract<InboundResult, { ok: true }>;

export interface EInvoiceOriginal {
  mediaType: string;
  sha256: string;
}

/** The format of the original in words, for the marking: "XRechnung (UBL)", "Factur-X / ZUGFeRD PDF (CII)". */
export function originalFormatLabel(read: Pick<ReadEInvoice, 'format' | 'syntax' | 'profile'>): string {
  const profile = (read.profile ?? '').toLowerCase();
  const cius = profile.includes('xrechnung') ? 'XRechnung' : profile.includes('peppol') ? 'Peppol BIS Billing 3.0' : null;
  switch (read.format) {
    case 'ubl':
      return cius ? `${cius} (UBL)` : 'UBL 2.1 (EN 16931)';
    case 'cii':
      return cius ? `${cius} (CII)` : 'CII D16B (EN 16931)';
    case 'facturx-pdf':
      return `Factur-X / ZUGFeRD PDF (${read.syntax}${cius ? `, ${cius}` : ''})`;
    case 'ebinterface':
      return 'ebInterface';
  }
}

/** The marking every rendering carries (docs/e-invoicing-inbound.md, "Rendering"). */
export function renderingMark(read: ReadEInvoice, original: EInvoiceOriginal): string {
  return `Darstellung der E-Rechnung (nicht das Original; Original: ${originalFormatLabel(read)}, SHA-256 ${original.sha256})`;
}

// Decimal strings as the document wrote them, in German notation: every significant decimal is
// kept (a unit price may have 4 or more), amounts show at least two. No float ever.
function decimal(value: string, minDecimals: number): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(value.trim());
  if (!m) return value;
  const frac = (m[3] ?? '').replace(/0+$/, '').padEnd(minDecimals, '0');
  const int = m[2].replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  const zero = /^0*$/.test(m[2]) && /^0*$/.test(frac);
  return `${m[1] === '-' && !zero ? '-' : ''}${int}${frac ? `,${frac}` : ''}`;
}
const money = (v: string | null, currency: string) => (v === null ? '' : `${decimal(v, 2)} ${currency}`);
const rate = (category: string | null, r: string | null) => [category, r === null ? null : `${decimal(r, 0)} %`].filter(Boolean).join(' ');
const date = (iso: string | null) => (iso && /^\d{4}-\d{2}-\d{2}$/.test(iso) ? formatDate(iso) : (iso ?? ''));

// UN/ECE Recommendation 20 codes seen on invoices; any other code is shown as it is.
const UNITS: Record<string, string> = {
  C62: 'Stück',
  H87: 'Stück',
  XPP: 'Stück',
  EA: 'Stück',
  HUR: 'Std.',
  DAY: 'Tag',
  MON: 'Monat',
  ANN: 'Jahr',
  KGM: 'kg',
  MTR: 'm',
  MTK: 'm²',
  LTR: 'l',
  KMT: 'km',
  LS: 'pauschal',
  SET: 'Satz',
};
const unit = (code: string | null) => (code ? (UNITS[code] ? `${UNITS[code]} (${code})` : code) : '');

// UNTDID 4461 codes of the payment means EN 16931 documents use.
const PAYMENT_MEANS: Record<string, string> = {
  '1': 'nicht definiert',
  '10': 'Bar',
  '20': 'Scheck',
  '30': 'Überweisung',
  '42': 'Zahlung auf Bankkonto',
  '48': 'Bankkarte',
  '49': 'Lastschrift',
  '57': 'Dauerauftrag',
  '58': 'SEPA-Überweisung',
  '59': 'SEPA-Lastschrift',
  ZZZ: 'vereinbart',
};

function addressLines(a: InboundAddress | null | undefined): string[] {
  if (!a) return [];
  const place = [a.postcode, a.city].filter(Boolean).join(' ');
  return [
    ...a.lines,
    [a.country, place]
      .filter(Boolean)
      .join('-')
      .replace(/^([A-Z]{2})-/, '$1 '),
  ].filter(Boolean);
}

function heading(doc: PDFKit.PDFDocument, title: string): void {
  ensure(doc, 40);
  doc.y += 8;
  setStyle(doc, { font: 'bold', size: 10 });
  doc.text(title, CONTENT_LEFT, doc.y, { width: CONTENT_WIDTH });
  hRule(doc, doc.y + 1);
  doc.y += 5;
}

function ensure(doc: PDFKit.PDFDocument, height: number): boolean {
  if (doc.y + height <= CONTENT_BOTTOM) return false;
  doc.addPage();
  return true;
}

/** Label/value pairs in two columns of text; empty values are left out. */
function facts(doc: PDFKit.PDFDocument, pairs: [string, string | null | undefined][], labelWidth = 170): void {
  for (const [label, value] of pairs) {
    if (!value) continue;
    setStyle(doc, { size: 8.5 });
    const h = Math.max(doc.heightOfString(value, { width: CONTENT_WIDTH - labelWidth }), 10);
    ensure(doc, h + 2);
    const y = doc.y;
    setStyle(doc, { size: 8.5, color: COLOR.muted });
    doc.text(label, CONTENT_LEFT, y, { width: labelWidth - 6 });
    setStyle(doc, { size: 8.5 });
    doc.text(value, CONTENT_LEFT + labelWidth, y, { width: CONTENT_WIDTH - labelWidth });
    doc.y = y + h + 2;
  }
}

interface Column {
  title: string;
  width: number;
  align?: 'left' | 'right';
}

/** A table whose rows are measured and moved whole to the next page, the header repeated there. */
function table(doc: PDFKit.PDFDocument, columns: Column[], rows: string[][]): void {
  const fixed = columns.reduce((s, c) => s + c.width, 0);
  const flex = columns.filter((c) => c.width === 0).length;
  const widths = columns.map((c) => (c.width === 0 ? (CONTENT_WIDTH - fixed) / Math.max(flex, 1) : c.width));
  const xs = widths.map((_, i) => CONTENT_LEFT + widths.slice(0, i).reduce((s, w) => s + w, 0));
  const PAD = 3;
  const header = () => {
    const y = doc.y;
    doc.save().rect(CONTENT_LEFT, y, CONTENT_WIDTH, 14).fill(COLOR.headerFill).restore();
    columns.forEach((c, i) => {
      textAt(doc, c.title, xs[i] + PAD, y + 3.5, { width: widths[i] - 2 * PAD, align: c.align, font: 'bold', size: 7.5 });
    });
    doc.y = y + 16;
  };
  ensure(doc, 40);
  header();
  for (const row of rows) {
    setStyle(doc, { size: 8 });
    const h = Math.max(...row.map((cell, i) => doc.heightOfString(cell || ' ', { width: widths[i] - 2 * PAD }))) + 4;
    if (ensure(doc, h)) header();
    const y = doc.y;
    row.forEach((cell, i) => {
      setStyle(doc, { size: 8 });
      doc.text(cell, xs[i] + PAD, y + 2, { width: widths[i] - 2 * PAD, align: columns[i].align ?? 'left' });
    });
    hRule(doc, y + h, CONTENT_LEFT, CONTENT_RIGHT, COLOR.faint);
    doc.y = y + h + 1;
  }
}

function partyBlock(doc: PDFKit.PDFDocument, title: string, lines: string[], x: number, y: number, width: number): number {
  setStyle(doc, { font: 'bold', size: 8.5 });
  doc.text(title, x, y, { width });
  setStyle(doc, { size: 8.5 });
  for (const l of lines) doc.text(l, x, doc.y, { width });
  return doc.y;
}

function parties(doc: PDFKit.PDFDocument, inv: InboundInvoice): void {
  const p = inv.presentation;
  const seller = [
    inv.seller.name ?? '',
    ...addressLines(inv.seller.address),
    inv.seller.vatId ? `USt-IdNr.: ${inv.seller.vatId}` : '',
    inv.seller.taxNumber ? `Steuernummer: ${inv.seller.taxNumber}` : '',
    inv.seller.email ? `E-Mail: ${inv.seller.email}` : '',
  ].filter(Boolean);
  const buyer = [inv.buyer.name ?? '', ...addressLines(p?.buyerAddress), inv.buyer.vatId ? `USt-IdNr.: ${inv.buyer.vatId}` : ''].filter(Boolean);
  const half = (CONTENT_WIDTH - 20) / 2;
  ensure(doc, 12 * Math.max(seller.length, buyer.length) + 20);
  const y = doc.y;
  const a = partyBlock(doc, 'Verkäufer (BG-4)', seller, CONTENT_LEFT, y, half);
  const b = partyBlock(doc, 'Käufer (BG-7)', buyer, CONTENT_LEFT + half + 20, y, half);
  doc.y = Math.max(a, b) + 4;
}

/**
 * The rendering of a read e-invoice. `original` names the stored file it was read from (its
 * media type and SHA-256, printed in the marking).
 */
export async function renderEInvoiceViewPdf(read: ReadEInvoice, original: EInvoiceOriginal): Promise<Buffer> {
  const inv = read.invoice;
  const cur = inv.currency;
  const p = inv.presentation;
  const title = `${inv.kind === 'creditNote' ? 'Gutschrift / Rechnungskorrektur' : 'Rechnung'} ${inv.number}`;
  const mark = renderingMark(read, original);
  const doc = createDocument(
    {
      title: `Darstellung der E-Rechnung ${inv.number}`,
      author: inv.seller.name ?? '',
      subject: mark,
      keywords: 'E-Rechnung Darstellung',
      date: new Date(`${inv.issueDate}T00:00:00Z`),
    },
    false,
  );
  doc.addPage();

  // The marking first, boxed, so nobody takes the rendering for the supplier's document.
  const markY = doc.y;
  setStyle(doc, { font: 'bold', size: 8.5, color: COLOR.accent });
  const markHeight = doc.heightOfString(mark, { width: CONTENT_WIDTH - 12 });
  doc
    .save()
    .lineWidth(0.8)
    .strokeColor(COLOR.accent)
    .rect(CONTENT_LEFT, markY, CONTENT_WIDTH, markHeight + 10)
    .stroke()
    .restore();
  doc.text(mark, CONTENT_LEFT + 6, markY + 5, { width: CONTENT_WIDTH - 12 });
  doc.y = markY + markHeight + 18;

  setStyle(doc, { font: 'bold', size: 14 });
  doc.text(title, CONTENT_LEFT, doc.y, { width: CONTENT_WIDTH });
  doc.y += 6;

  facts(doc, [
    ['Rechnungsnummer (BT-1)', inv.number],
    ['Rechnungsdatum (BT-2)', date(inv.issueDate)],
    ['Fälligkeitsdatum (BT-9)', date(inv.dueDate)],
    ['Liefer-/Leistungsdatum (BT-72)', date(p?.deliveryDate ?? null)],
    ['Währung (BT-5)', cur],
    ['Käuferreferenz (BT-10)', inv.buyerReference],
    ['Bestellreferenz (BT-13)', inv.orderReference],
    ['Bezug auf Rechnung (BT-25)', inv.precedingInvoiceNumber],
    ['Spezifikation (BT-24)', read.profile],
  ]);
  doc.y += 6;
  parties(doc, inv);

  heading(doc, 'Positionen (BG-25)');
  if (inv.lines.length === 0) {
    setStyle(doc, { size: 8.5, color: COLOR.muted });
    doc.text('Das Dokument enthält keine Positionen.', CONTENT_LEFT, doc.y, { width: CONTENT_WIDTH });
  } else {
    table(
      doc,
      [
        { title: 'Pos.', width: 36 },
        { title: 'Bezeichnung', width: 0 },
        { title: 'Menge', width: 44, align: 'right' },
        { title: 'Einheit', width: 58 },
        { title: 'Preis netto', width: 62, align: 'right' },
        { title: 'USt', width: 42, align: 'right' },
        { title: 'Netto', width: 70, align: 'right' },
      ],
      inv.lines.map((l, i) => [
        p?.lineIds[i] ?? String(i + 1),
        [l.name, p?.lineDescriptions[i]].filter(Boolean).join('\n'),
        decimal(l.quantity, 0),
        unit(l.unitCode),
        l.netPrice === null ? '' : decimal(l.netPrice, 2),
        rate(l.vatCategory, l.vatRate),
        money(l.netAmount, cur),
      ]),
    );
  }

  const adjustments = [...inv.allowances.map((a) => ['Nachlass (BG-20)', a] as const), ...inv.charges.map((c) => ['Zuschlag (BG-21)', c] as const)];
  if (adjustments.length) {
    heading(doc, 'Nachlässe und Zuschläge auf Dokumentebene');
    table(
      doc,
      [
        { title: 'Art', width: 100 },
        { title: 'Grund', width: 0 },
        { title: 'USt', width: 60, align: 'right' },
        { title: 'Betrag netto', width: 90, align: 'right' },
      ],
      adjustments.map(([what, a]) => [what, a.reason ?? '', rate(a.vatCategory, a.vatRate), money(a.amount, cur)]),
    );
  }

  heading(doc, 'Umsatzsteuer (BG-23)');
  table(
    doc,
    [
      { title: 'Kategorie', width: 60 },
      { title: 'Satz', width: 50, align: 'right' },
      { title: 'Basis (BT-116)', width: 100, align: 'right' },
      { title: 'Steuer (BT-117)', width: 90, align: 'right' },
      { title: 'Befreiungsgrund', width: 0 },
    ],
    inv.vatBreakdown.map((v) => [
      v.category ?? '',
      v.rate === null ? '' : `${decimal(v.rate, 0)} %`,
      money(v.basis, cur),
      money(v.tax, cur),
      [v.exemptionCode, v.exemptionReason].filter(Boolean).join(': '),
    ]),
  );

  heading(doc, 'Summen (BG-22)');
  const t = inv.totals;
  facts(
    doc,
    [
      ['Summe der Positionen netto (BT-106)', money(t.lineNet, cur)],
      ['Summe der Nachlässe (BT-107)', money(t.allowances, cur)],
      ['Summe der Zuschläge (BT-108)', money(t.charges, cur)],
      ['Gesamtbetrag netto (BT-109)', money(t.net, cur)],
      ['Umsatzsteuer (BT-110)', money(t.tax, cur)],
      ['Gesamtbetrag brutto (BT-112)', money(t.gross, cur)],
      ['Bereits bezahlt (BT-113)', money(t.prepaid, cur)],
      ['Rundungsbetrag (BT-114)', money(t.rounding, cur)],
      ['Zahlungen an Dritte (BT-DEX-002)', money(t.thirdPartyPayments, cur)],
      ['Zahlbetrag (BT-115)', money(t.due, cur)],
    ],
    230,
  );

  const payment: [string, string | null | undefined][] = [
    ['Zahlungsart (BT-81)', p?.paymentMeansCode ? `${PAYMENT_MEANS[p.paymentMeansCode] ?? 'Code'} (${p.paymentMeansCode})` : null],
    ['IBAN (BT-84)', inv.seller.iban ? formatIban(inv.seller.iban) : null],
    ['BIC (BT-86)', p?.bic],
    ['Kontoinhaber (BT-85)', p?.accountName],
    ['Verwendungszweck (BT-83)', p?.remittanceInformation],
    ['Zahlungsbedingungen (BT-20)', p?.paymentTerms],
  ];
  if (payment.some(([, v]) => v)) {
    heading(doc, 'Zahlungsanweisungen (BG-16)');
    facts(doc, payment);
  }

  if (p?.notes.length) {
    heading(doc, 'Bemerkungen (BT-22)');
    setStyle(doc, { size: 8.5 });
    for (const note of p.notes) {
      ensure(doc, 12);
      doc.text(note, CONTENT_LEFT, doc.y, { width: CONTENT_WIDTH });
      doc.y += 3;
    }
  }

  if (read.warnings.length) {
    heading(doc, 'Hinweise beim Einlesen');
    setStyle(doc, { size: 8, color: COLOR.muted });
    for (const w of read.warnings) {
      ensure(doc, 11);
      doc.text(`– ${w}`, CONTENT_LEFT, doc.y, { width: CONTENT_WIDTH });
    }
  }

  // Every page says what it is and which page it is.
  const footer = `Darstellung der E-Rechnung ${inv.number} von ${inv.seller.name ?? 'unbekannt'}, nicht das Original`;
  forEachPage(doc, (i, n) => {
    const y = doc.page.height - MARGIN.bottom + 30;
    hRule(doc, y - 6, CONTENT_LEFT, CONTENT_RIGHT, COLOR.faint);
    textAt(doc, footer, CONTENT_LEFT, y, { width: CONTENT_WIDTH - 80, size: 7, color: COLOR.muted });
    textAt(doc, `Seite ${i + 1} von ${n}`, CONTENT_RIGHT - 80, y, { width: 80, align: 'right', size: 7, color: COLOR.muted });
  });
  return toBuffer(doc);
}
