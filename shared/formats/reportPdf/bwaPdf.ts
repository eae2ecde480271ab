import { formatAmount } from '../pdf/format';
import type { BwaBlock, BwaLine, BwaReport } from '../../domain/bwa';
import { cell, createReportDocument, createdLabel, footer, INK, rule, style } from './common';
import { toBuffer } from '../pdf/layout';

/**
 * BWA as a landscape PDF: a grouped bar chart per month (revenue this year, revenue prior year,
 * expenses this year), the monthly table with prior-year comparison, and the cumulated year with
 * every expense group. Numbers come formatted from the report's decimal strings; JS numbers are
 * used only for bar heights.
 */
const MONTHS = ['Jän', 'Feb', 'Mär', 'Apr', 'Mai', 'Jun', 'Jul', 'Aug', 'Sep', 'Okt', 'Nov', 'Dez'];

const pct = (l: BwaLine) => (l.changePercent === null ? '–' : `${l.changePercent.replace('.', ',')} %`);

export interface BwaPdfInput {
  companyName: string;
  report: BwaReport;
  createdAt: Date;
}

function drawChart(doc: PDFKit.PDFDocument, report: BwaReport, x: number, y: number, w: number, h: number): void {
  const series = [
    { label: `Umsatz ${report.year}`, color: INK.current, values: report.months.map((m) => Number(m.revenue.current)) },
    { label: `Umsatz ${report.priorYear}`, color: INK.prior, values: report.months.map((m) => Number(m.revenue.prior)) },
    { label: `Aufwand ${report.year}`, color: '#c98a3a', values: report.months.map((m) => Number(m.totalExpenses.current)) },
  ];
  const all = series.flatMap((s) => s.values);
  const max = Math.max(0, ...all);
  const min = Math.min(0, ...all);
  const span = max - min || 1;
  const plotTop = y + 18;
  const plotH = h - 40;
  const zeroY = plotTop + (max / span) * plotH;
  const axisX = x + 60;
  const plotW = w - 60;

  style(doc, 'regular', 7, INK.muted);
  for (let i = 0; i <= 4; i++) {
    const v = max - (span * i) / 4;
    const ly = plotTop + (plotH * i) / 4;
    rule(doc, ly, axisX, x + w, '#e2e2e2');
    cell(doc, formatAmount(v.toFixed(2)).replace(/,\d\d$/, ''), x, ly - 4, 55, 'right');
  }
  rule(doc, zeroY, axisX, x + w, INK.rule, 0.8);

  const groupW = plotW / 12;
  const barW = (groupW * 0.75) / series.length;
  report.months.forEach((_, i) => {
    series.forEach((s, j) => {
      const v = s.values[i];
      const bh = (Math.abs(v) / span) * plotH;
      const bx = axisX + i * groupW + groupW * 0.125 + j * barW;
      const by = v >= 0 ? zeroY - bh : zeroY;
      if (bh > 0)
        doc
          .save()
          .rect(bx, by, barW - 1, bh)
          .fill(s.color)
          .restore();
    });
    style(doc, 'regular', 7.5, INK.text);
    cell(doc, MONTHS[i], axisX + i * groupW, plotTop + plotH + 4, groupW, 'center');
  });
  let lx = axisX;
  for (const s of series) {
    doc
      .save()
      .rect(lx, y + 2, 9, 9)
      .fill(s.color)
      .restore();
    style(doc, 'regular', 8);
    cell(doc, s.label, lx + 13, y + 2, 110);
    lx += 125;
  }
}

function monthTable(doc: PDFKit.PDFDocument, report: BwaReport, x: number, y: number, w: number): number {
  const headers = [
    'Monat',
    `Umsatz ${report.year}`,
    `Umsatz ${report.priorYear}`,
    'Δ %',
    `Aufwand ${report.year}`,
    `Aufwand ${report.priorYear}`,
    `Ergebnis ${report.year}`,
    `Ergebnis ${report.priorYear}`,
    'Δ %',
  ];
  const widths = [60, 95, 95, 55, 95, 95, 95, 95, 55];
  const scale = w / widths.reduce((a, b) => a + b, 0);
  const ws = widths.map((v) => v * scale);
  const row = (values: string[], bold: boolean, fill?: string) => {
    if (fill)
      doc
        .save()
        .rect(x, y - 3, w, 15)
        .fill(fill)
        .restore();
    style(doc, bold ? 'bold' : 'regular', 8);
    let cx = x;
    values.forEach((v, i) => {
      cell(doc, v, cx + 2, y, ws[i] - 4, i === 0 ? 'left' : 'right');
      cx += ws[i];
    });
    y += 15;
  };
  row(headers, true, INK.fill);
  for (const m of report.months)
    row(
      [
        MONTHS[m.month - 1],
        formatAmount(m.revenue.current),
        formatAmount(m.revenue.prior),
        pct(m.revenue),
        formatAmount(m.totalExpenses.current),
        formatAmount(m.totalExpenses.prior),
        formatAmount(m.result.current),
        formatAmount(m.result.prior),
        pct(m.result),
      ],
      false,
    );
  rule(doc, y - 3, x, x + w);
  const t = report.total;
  row(
    [
      'Summe',
      formatAmount(t.revenue.current),
      formatAmount(t.revenue.prior),
      pct(t.revenue),
      formatAmount(t.totalExpenses.current),
      formatAmount(t.totalExpenses.prior),
      formatAmount(t.result.current),
      formatAmount(t.result.prior),
      pct(t.result),
    ],
    true,
  );
  return y;
}

function yearTable(doc: PDFKit.PDFDocument, report: BwaReport, block: BwaBlock, x: number, y: number, w: number): void {
  const widths = [w - 4 * 110, 110, 110, 110, 110];
  const header = ['Position', String(report.year), String(report.priorYear), 'Veränderung', 'Veränderung %'];
  // Above the footer line (common.ts footer draws at height − 35).
  const bottom = () => doc.page.height - doc.page.margins.bottom - 16;
  const row = (values: string[], bold: boolean, fill?: string) => {
    // One expense account per row: a business has dozens. A row past the bottom would make pdfkit
    // put each separately placed cell on a page of its own, so the table continues on a new
    // page under its header.
    if (values !== header && y > bottom()) {
      doc.addPage();
      y = doc.page.margins.top;
      row(header, true, INK.fill);
    }
    if (fill)
      doc
        .save()
        .rect(x, y - 3, w, 15)
        .fill(fill)
        .restore();
    style(doc, bold ? 'bold' : 'regular', 8.5);
    let cx = x;
    values.forEach((v, i) => {
      cell(doc, v, cx + 2, y, widths[i] - 4, i === 0 ? 'left' : 'right');
      cx += widths[i];
    });
    y += 16;
  };
  const line = (label: string, l: BwaLine, bold = false) => row([label, formatAmount(l.current), formatAmount(l.prior), formatAmount(l.change), pct(l)], bold);
  row(header, true, INK.fill);
  line('Umsatzerlöse (netto)', block.revenue, true);
  line('Material- / Wareneinsatz', block.costOfGoods);
  line('Rohertrag', block.grossProfit, true);
  for (const e of block.expenses) line(`Konto ${e.group}`, e);
  rule(doc, y - 3, x, x + w);
  line('Gesamtaufwand', block.totalExpenses, true);
  line('Ergebnis', block.result, true);
}

export async function renderBwaPdf(input: BwaPdfInput): Promise<Buffer> {
  const { report } = input;
  const doc = createReportDocument({ title: `BWA ${report.year}`, author: input.companyName, landscape: true, createdAt: input.createdAt });
  const left = doc.page.margins.left;
  const width = doc.page.width - left - doc.page.margins.right;
  style(doc, 'bold', 15);
  doc.text(`Betriebswirtschaftliche Auswertung ${report.year}`, left, 45);
  style(doc, 'regular', 9.5, INK.muted);
  doc.text(`${input.companyName} · Vergleich mit ${report.priorYear} · Beträge netto in EUR`);
  drawChart(doc, report, left, 90, width, 210);
  monthTable(doc, report, left, 315, width);

  doc.addPage();
  style(doc, 'bold', 13);
  doc.text(`Kumuliert Jänner bis Dezember ${report.year}`, left, 45);
  yearTable(doc, report, report.total, left, 75, width);
  footer(doc, `${input.companyName} · BWA ${report.year} · ${createdLabel(input.createdAt)}`);
  return toBuffer(doc);
}
