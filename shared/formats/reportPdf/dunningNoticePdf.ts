import type { DunningNoticeContent } from '../../domain/dunning/levels';
import { dec, fmtMoney } from '../../domain/money';
import { formatDate, formatMoney, formatPercent } from '../pdf/format';
import { toBuffer } from '../pdf/layout';
import { cell, createReportDocument, footer, INK, rule, style } from './common';

/**
 * A dunning notice (Zahlungserinnerung / Mahnung) as PDF: parties, the open invoice, the fee, the
 * default interest per base-rate period with its legal basis, earlier notices' charges and the
 * total. Same fonts and helpers as the report PDFs; rendered from the content frozen when the
 * notice was issued (CreationDate = issue date), so every rendering shows the same.
 */
const TITLES = ['Zahlungserinnerung', '2. Mahnung', 'Letzte Mahnung'];

const LEGAL_BASIS: Record<'AT' | 'DE', Record<'business' | 'consumer', string>> = {
  DE: {
    business: 'Verzugszinsen gemäß § 288 Abs. 2 BGB (Basiszinssatz § 247 BGB + 9 Prozentpunkte), Pauschale gemäß § 288 Abs. 5 BGB',
    consumer: 'Verzugszinsen gemäß § 288 Abs. 1 BGB (Basiszinssatz § 247 BGB + 5 Prozentpunkte)',
  },
  AT: {
    business: 'Verzugszinsen gemäß § 456 UGB (Basiszinssatz + 9,2 Prozentpunkte), Pauschale gemäß § 458 UGB',
    consumer: 'Verzugszinsen gemäß § 1000 Abs. 1 ABGB (4 % p. a.)',
  },
};

export async function renderDunningNoticePdf(c: DunningNoticeContent): Promise<Buffer> {
  const title = TITLES[c.level - 1] ?? `${c.level}. Mahnung`;
  const doc = createReportDocument({ title: `${title} ${c.number}`, author: c.seller.name, createdAt: new Date(`${c.issueDate}T00:00:00Z`) });
  const left = doc.page.margins.left;
  const width = doc.page.width - left - doc.page.margins.right;
  const money = (v: string) => formatMoney(v, c.invoice.currency);

  style(doc, 'bold', 10).text(c.seller.name, left, 50, { width: width / 2 });
  style(doc, 'regular', 8.5, INK.muted).text([c.seller.address, c.seller.vatId ? `UID ${c.seller.vatId}` : null].filter(Boolean).join('\n'), {
    width: width / 2,
  });
  style(doc, 'regular', 9).text([c.customer.company, c.customer.name, c.customer.address].filter(Boolean).join('\n'), left, 140, { width: width / 2 });
  style(doc, 'regular', 9);
  cell(doc, `Nummer: ${c.number}`, left + width / 2, 140, width / 2, 'right');
  cell(doc, `Datum: ${formatDate(c.issueDate)}`, left + width / 2, 153, width / 2, 'right');
  cell(doc, `Stufe: ${c.level}`, left + width / 2, 166, width / 2, 'right');

  style(doc, 'bold', 14).text(title, left, 230, { width });
  style(doc, 'regular', 9.5).text(
    `Unsere Rechnung ${c.invoice.number} vom ${formatDate(c.invoice.issueDate)} war am ${formatDate(c.invoice.dueDate)} fällig. ` +
      `Bis heute ist folgender Betrag offen. Wir bitten Sie, den Gesamtbetrag bis ${formatDate(c.payBy)} zu überweisen.`,
    left,
    doc.y + 8,
    { width },
  );

  // The open items.
  let y = doc.y + 16;
  const col = { text: left, amount: left + width - 110 };
  const row = (label: string, amount: string, bold = false) => {
    style(doc, bold ? 'bold' : 'regular', 9.5);
    cell(doc, label, col.text, y, width - 120);
    cell(doc, amount, col.amount, y, 110, 'right');
    y += 16;
  };
  style(doc, 'bold', 9, INK.muted);
  cell(doc, 'Offene Posten', col.text, y, width - 120);
  cell(doc, 'Betrag', col.amount, y, 110, 'right');
  y += 14;
  rule(doc, y - 2, left, left + width);
  row(`Rechnung ${c.invoice.number}, fällig ${formatDate(c.invoice.dueDate)} (Rechnungsbetrag ${money(c.invoice.totalGross)})`, money(c.invoice.totalGross));
  if (c.invoice.amountPaid !== '0.00') row('abzüglich bereits bezahlt', money(`-${c.invoice.amountPaid}`));
  for (const e of c.earlier) {
    if (e.fee !== '0.00') row(`Mahngebühr aus ${e.number} (Stufe ${e.level})`, money(e.fee));
    if (e.interest !== '0.00') row(`Verzugszinsen aus ${e.number}`, money(e.interest));
  }
  const ownFee = dec(c.fee).minus(c.lumpSum);
  if (c.lumpSum !== '0.00') row(c.law === 'AT' ? 'Pauschale gemäß § 458 UGB' : 'Pauschale gemäß § 288 Abs. 5 BGB', money(c.lumpSum));
  if (!ownFee.isZero()) row('Mahngebühr', money(fmtMoney(ownFee)));
  for (const p of c.periods) {
    row(`Verzugszinsen ${formatDate(p.from)}–${formatDate(p.to)}: ${p.days} Tage zu ${formatPercent(p.rate)} p. a.`, money(p.amount));
    if (p.baseRate !== null) {
      style(doc, 'regular', 8, INK.muted);
      cell(doc, `Basiszinssatz ${formatPercent(p.baseRate)} ab ${formatDate(p.from)}`, col.text + 10, y - 5, width - 130);
      y += 8;
    }
  }
  rule(doc, y - 2, left, left + width, INK.text, 0.8);
  y += 2;
  row('Gesamtbetrag', money(c.totalDue), true);

  y += 10;
  style(doc, 'regular', 8.5, INK.muted);
  if (c.law && c.periods.length) doc.text(`${LEGAL_BASIS[c.law][c.customerType]}. Zinsen: tatsächliche Tage / 365.`, left, y, { width });
  if (c.seller.iban) {
    style(doc, 'regular', 9).text(
      `Bankverbindung: IBAN ${c.seller.iban}${c.seller.bic ? `, BIC ${c.seller.bic}` : ''}. Verwendungszweck: ${c.invoice.number}`,
      left,
      doc.y + 8,
      { width },
    );
  }
  style(doc, 'regular', 8.5, INK.muted).text(
    'Sollten Sie die Zahlung bereits veranlasst haben, betrachten Sie dieses Schreiben bitte als gegenstandslos.',
    left,
    doc.y + 8,
    { width },
  );

  footer(doc, `${c.seller.name} · ${title} ${c.number}`);
  return toBuffer(doc);
}
