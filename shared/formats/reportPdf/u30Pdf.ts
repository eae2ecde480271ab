import { formatAmount, formatDate, formatPercent } from '../pdf/format';
import type { TaxPeriod } from '../../domain/tax/period';
import { cell, createReportDocument, createdLabel, footer, INK, rule, style } from './common';
import { toBuffer } from '../pdf/layout';

/**
 * The U30 (Umsatzsteuervoranmeldung) as a readable A4 form: the Kennzahlen FinanzOnline shows,
 * in the order of the official form, plus the tax per rate and the payable amount. It is for
 * reading and filing away; the return itself is filed as XML.
 */
export interface U30PdfInput {
  company: { name: string; taxNumber: string | null; vatId: string | null; address: string | null };
  period: TaxPeriod;
  kennzahlen: Record<string, string>;
  salesByRate: Array<{ taxRate: string; net: string; tax: string }>;
  outputTax: string;
  inputTax: string;
  payable: string;
  unclassifiedZeroRatedNet: string;
  createdAt: Date;
}

const MONTHS = ['Jänner', 'Februar', 'März', 'April', 'Mai', 'Juni', 'Juli', 'August', 'September', 'Oktober', 'November', 'Dezember'];

export function periodText(p: TaxPeriod): string {
  return p.kind === 'month' ? `${MONTHS[p.month - 1]} ${p.year}` : `${p.quarter}. Quartal ${p.year}`;
}

/** Form order; the rows marked optional are printed only when the report has them (not zero). */
const ROWS: Array<[string, string, optional?: true]> = [
  ['000', 'Gesamtbetrag der Bemessungsgrundlagen für Lieferungen und sonstige Leistungen'],
  ['021', 'davon: im Inland nicht steuerbare Leistungen an Unternehmer in der EU (Reverse Charge)'],
  ['011', 'davon steuerfrei: Ausfuhrlieferungen'],
  ['017', 'davon steuerfrei: innergemeinschaftliche Lieferungen'],
  ['019', 'davon steuerfrei: Grundstücksumsätze (§ 6 Abs. 1 Z 9 lit. a)', true],
  ['016', 'davon steuerfrei: Kleinunternehmer (§ 6 Abs. 1 Z 27)', true],
  ['020', 'davon steuerfrei: übrige steuerfreie Umsätze ohne Vorsteuerabzug', true],
  ['022', 'zu versteuern mit 20 % (Normalsteuersatz)'],
  ['029', 'zu versteuern mit 10 % (ermäßigter Steuersatz)'],
  ['006', 'zu versteuern mit 13 % (ermäßigter Steuersatz)'],
  ['057', 'Steuerschuld gemäß § 19 Abs. 1 zweiter Satz (Reverse Charge, Leistungsbezug)', true],
  ['070', 'Innergemeinschaftliche Erwerbe: Gesamtbetrag der Bemessungsgrundlagen', true],
  ['072', 'davon zu versteuern mit 20 %', true],
  ['073', 'davon zu versteuern mit 10 %', true],
  ['008', 'davon zu versteuern mit 13 %', true],
  ['060', 'Gesamtbetrag der Vorsteuern'],
  ['065', 'Vorsteuern aus dem innergemeinschaftlichen Erwerb', true],
  ['066', 'Vorsteuern betreffend die Steuerschuld gemäß § 19 Abs. 1 zweiter Satz', true],
  ['095', 'Vorauszahlung (+) / Überschuss (−)'],
];

export async function renderU30Pdf(input: U30PdfInput): Promise<Buffer> {
  const doc = createReportDocument({ title: `U30 ${input.period.label}`, author: input.company.name, createdAt: input.createdAt });
  const left = doc.page.margins.left;
  const right = doc.page.width - doc.page.margins.right;
  const width = right - left;

  style(doc, 'bold', 16);
  doc.text('Umsatzsteuervoranmeldung (U30)', left, 50);
  style(doc, 'regular', 10, INK.muted);
  doc.text(`Voranmeldungszeitraum: ${periodText(input.period)} (${formatDate(input.period.start)} – ${formatDate(input.period.end)})`);
  doc.moveDown(0.8);
  style(doc, 'regular', 9.5);
  doc.text(input.company.name);
  if (input.company.address) doc.text(input.company.address.replace(/\r?\n/g, ', '));
  doc.text(`Steuernummer: ${input.company.taxNumber ?? '—'}    UID: ${input.company.vatId ?? '—'}`);
  doc.moveDown(1.2);

  let y = doc.y;
  const kzX = left;
  const textX = left + 45;
  const amountW = 110;
  const textW = width - 45 - amountW - 10;
  doc
    .save()
    .rect(left, y - 3, width, 18)
    .fill(INK.fill)
    .restore();
  style(doc, 'bold', 9);
  cell(doc, 'KZ', kzX + 4, y + 1, 40);
  cell(doc, 'Bezeichnung', textX, y + 1, textW);
  cell(doc, 'Betrag in EUR', right - amountW, y + 1, amountW - 4, 'right');
  y += 22;
  for (const [kz, label, optional] of ROWS) {
    if (optional && input.kennzahlen[kz] === undefined) continue;
    const value = input.kennzahlen[kz] ?? '0.00';
    const strong = kz === '000' || kz === '095';
    style(doc, strong ? 'bold' : 'regular', 9, kz === '095' && value.startsWith('-') ? INK.negative : INK.text);
    cell(doc, kz, kzX + 4, y, 40);
    doc.text(label, textX, y, { width: textW });
    const h = Math.max(14, doc.heightOfString(label, { width: textW }) + 4);
    cell(doc, formatAmount(value), right - amountW, y, amountW - 4, 'right');
    y += h;
    rule(doc, y - 3, left, right, '#d0d0d0');
  }

  y += 18;
  style(doc, 'bold', 11);
  doc.text('Steuer nach Steuersätzen', left, y);
  y = doc.y + 6;
  const cols = [left, left + 130, left + 300];
  style(doc, 'bold', 9);
  cell(doc, 'Steuersatz', cols[0], y, 120);
  cell(doc, 'Bemessungsgrundlage', cols[1], y, 160, 'right');
  cell(doc, 'Umsatzsteuer', cols[2], y, 160, 'right');
  y += 16;
  rule(doc, y - 4, left, cols[2] + 160);
  style(doc, 'regular', 9);
  for (const r of input.salesByRate) {
    cell(doc, formatPercent(r.taxRate), cols[0], y, 120);
    cell(doc, formatAmount(r.net), cols[1], y, 160, 'right');
    cell(doc, formatAmount(r.tax), cols[2], y, 160, 'right');
    y += 15;
  }
  rule(doc, y - 4, left, cols[2] + 160);
  style(doc, 'bold', 9);
  cell(doc, 'Summe Umsatzsteuer', cols[0], y, 200);
  cell(doc, formatAmount(input.outputTax), cols[2], y, 160, 'right');
  y += 15;
  style(doc, 'regular', 9);
  cell(doc, 'abzüglich Vorsteuer (KZ 060)', cols[0], y, 200);
  cell(doc, formatAmount(input.inputTax), cols[2], y, 160, 'right');
  y += 15;
  style(doc, 'bold', 10, input.payable.startsWith('-') ? INK.negative : INK.text);
  cell(doc, input.payable.startsWith('-') ? 'Überschuss (Gutschrift)' : 'Zahllast', cols[0], y, 200);
  cell(doc, formatAmount(input.payable), cols[2], y, 160, 'right');
  y += 28;

  style(doc, 'regular', 8, INK.muted);
  const notes = [
    'Die Steuer wird je Steuersatz auf die Summe der Bemessungsgrundlagen berechnet (kaufmännisch gerundet). FinanzOnline berechnet Steuer und KZ 095 aus den übermittelten Bemessungsgrundlagen selbst.',
  ];
  if (input.unclassifiedZeroRatedNet !== '0.00') {
    notes.push(
      `Achtung: ${formatAmount(input.unclassifiedZeroRatedNet)} EUR Umsatz zu 0 % sind weder Reverse Charge (KZ 021) noch als steuerfreie Ausfuhr oder innergemeinschaftliche Lieferung erfasst; bitte vor der Abgabe zuordnen.`,
    );
  }
  doc.text(notes.join('\n\n'), left, y, { width });
  footer(doc, `${input.company.name} · U30 ${input.period.label} · ${createdLabel(input.createdAt)}`);
  return toBuffer(doc);
}
