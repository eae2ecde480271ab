/**
 * rendering: invoice PDFs/s and ZUGFeRD/s (10-item invoice) rendered in this process by
 * shared/documents/renderDocument.ts, vs pdfkit drawing a similar page (DejaVu Sans embedded as
 * ours does, letterhead, address block, a 10-row table with rules, totals, footer) with no I/O.
 * N sequential iterations each after a short warm-up; one process, one core.
 */
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import PDFDocument from 'pdfkit';
import { opsPerSecond } from './lib/measure';
import type { Benchmark } from './lib/types';

const require = createRequire(import.meta.url);
const TTF = path.join(path.dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
const REGULAR = fs.readFileSync(path.join(TTF, 'DejaVuSans.ttf'));
const BOLD = fs.readFileSync(path.join(TTF, 'DejaVuSans-Bold.ttf'));

type Row = { description: string; quantity: number; unit: string | null; unitPrice: string; taxRate: string; netAmount: string };

/** The baseline page: what an invoice PDF looks like, drawn straight with pdfkit. */
function pdfkitInvoice(rows: Row[]): Promise<Buffer> {
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
    ['Pos', 'Beschreibung', 'Menge', 'Preis', 'USt', 'Netto'].forEach((h, i) => doc.text(h, cols[i], y, { width: i === 1 ? 210 : 60 }));
    doc.moveTo(50, y + 14).lineTo(545, y + 14).stroke();
    doc.font('R');
    rows.forEach((r, i) => {
      y += 20;
      [String(i + 1), r.description, `${r.quantity} ${r.unit ?? ''}`, `${r.unitPrice} €`, `${r.taxRate} %`, `${r.netAmount} €`].forEach((c, j) =>
        doc.text(c, cols[j], y, { width: j === 1 ? 210 : 70 }),
      );
      doc.moveTo(50, y + 16).lineTo(545, y + 16).lineWidth(0.3).stroke();
    });
    y += 40;
    doc.text('Summe netto', 350, y).text('1.234,50 €', 470, y);
    doc.text('USt 20 %', 350, y + 14).text('246,90 €', 470, y + 14);
    doc.font('B').text('Gesamtbetrag', 350, y + 28).text('1.481,40 €', 470, y + 28);
    doc.font('R').fontSize(8).text('IBAN AT61 1904 3002 3457 3201 · BIC BKAUATWW · Zahlbar ohne Abzug binnen 14 Tagen', 50, 780);
    doc.end();
  });
}

export const rendering: Benchmark = {
  name: 'rendering',
  needsDb: false,
  async run(ctx) {
    const n = Number(process.env.BENCH_RENDER_N ?? 100);
    const { renderDocument } = await import('../../shared/documents/renderDocument');
    const { makeDocumentInput, manyItems } = await import('../formats/pdf/fixtures');
    const input = makeDocumentInput({ items: manyItems(10) });
    const rows = input.invoice.items as Row[];

    const pdf = await opsPerSecond(n, () => renderDocument('pdf', input));
    ctx.log(`  ours pdf:      ${pdf.perSec.toFixed(1)}/s (${n} in ${pdf.ms.toFixed(0)} ms, ${((await renderDocument('pdf', input)).length / 1024).toFixed(0)} KiB)`);
    const zugferd = await opsPerSecond(n, () => renderDocument('zugferd', input));
    ctx.log(`  ours zugferd:  ${zugferd.perSec.toFixed(1)}/s (${n} in ${zugferd.ms.toFixed(0)} ms, ${((await renderDocument('zugferd', input)).length / 1024).toFixed(0)} KiB)`);
    const base = await opsPerSecond(n, () => pdfkitInvoice(rows));
    ctx.log(`  pdfkit page:   ${base.perSec.toFixed(1)}/s (${n} in ${base.ms.toFixed(0)} ms, ${((await pdfkitInvoice(rows)).length / 1024).toFixed(0)} KiB)`);
    return [
      { name: 'rendering pdf', metric: 'documents/s', ours: pdf.perSec, baseline: base.perSec, better: 'higher' },
      { name: 'rendering zugferd', metric: 'documents/s', ours: zugferd.perSec, baseline: base.perSec, better: 'higher' },
    ];
  },
};
