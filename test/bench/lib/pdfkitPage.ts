/**
 * The rendering baseline: what an invoice PDF looks like, drawn straight with pdfkit (DejaVu Sans
 * embedded as ours does, letterhead, address block, a 10-row table with rules, totals, footer),
 * no I/O. Used in the benchmark process (rendering) and in a worker-like process of its own
 * (lib/bareProcess.ts, the deployed shape).
 */
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import PDFDocument from 'pdfkit';

const require = createRequire(import.meta.url);
const TTF = path.join(path.dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
const REGULAR = fs.readFileSync(path.join(TTF, 'DejaVuSans.ttf'));
const BOLD = fs.readFileSync(path.join(TTF, 'DejaVuSans-Bold.ttf'));

export type Row = { description: string; quantity: number; unit: string | null; unitPrice: string; taxRate: string; netAmount: string };

/** The baseline page: what an invoice PDF looks like, drawn straight with pdfkit. */
export function pdfkitInvoice(rows: Row[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ size: 'A4', margin: 50, font: REGULAR as unknown as string });
    const chunks: Buffer[] = [];
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    doc.registerFont('R', REGULAR);
    doc.registerFont('B', BOLD);
    doc.font('B').fontSize(14).text('Müller & Söhne Software GmbH', 50, 50);
    doc.font('R').fontSize(9).text('Mariahilfer Straße 1, 1060 Wien · UID ATU12345678', 50, 70);
    doc.fontSize(10).text('Beispiel Handels GmbH\nErika Mustermann\nHauptstraße 5\n10115 Berlin\nUID DE123456789', 50, 120);
    doc.text('Rechnungsdatum: 22.11.2026\nLeistungsdatum: 22.11.2026\nFällig: 06.12.2026', 350, 120);
    doc.font('B').fontSize(16).text('Rechnung RE-2026-00001', 50, 220);
    const cols = [50, 80, 300, 350, 420, 470];
    let y = 260;
    doc.font('B').fontSize(9);
    for (const [i, h] of ['Pos', 'Beschreibung', 'Menge', 'Preis', 'USt', 'Netto'].entries()) doc.text(h, cols[i], y, { width: i === 1 ? 210 : 60 });
    doc
      .moveTo(50, y + 14)
      .lineTo(545, y + 14)
      .stroke();
    doc.font('R');
    rows.forEach((r, i) => {
      y += 20;
      for (const [j, c] of [
        String(i + 1),
        r.description,
        `${r.quantity} ${r.unit ?? ''}`,
        `${r.unitPrice} €`,
        `${r.taxRate} %`,
        `${r.netAmount} €`,
      ].entries()) {
        doc.text(c, cols[j], y, { width: j === 1 ? 210 : 70 });
      }
      doc
        .moveTo(50, y + 16)
        .lineTo(545, y + 16)
        .lineWidth(0.3)
        .stroke();
    });
    y += 40;
    doc.text('Summe netto', 350, y).text('1.234,50 €', 470, y);
    doc.text('USt 20 %', 350, y + 14).text('246,90 €', 470, y + 14);
    doc
      .font('B')
      .text('Gesamtbetrag', 350, y + 28)
      .text('1.481,40 €', 470, y + 28);
    doc.font('R').fontSize(8).text('IBAN AT61 1904 3002 3457 3201 · BIC BKAUATWW · Zahlbar ohne Abzug binnen 14 Tagen', 50, 780);
    doc.end();
  });
}
