/**
 * Markdown tables (GFM) in the PDF: column widths from the content, rows placed and split across
 * pages like the invoice's item rows, the header repeated on each page.
 */
import type { Tokens } from 'marked';
import { COLOR, CONTENT_BOTTOM, setStyle } from './layout';
import { type Ctx, plainText } from './markdownToPdfInline';
import { breakLongRuns, splitToFit } from './textBreaks';

/** Table columns are never narrower than this (unless the columns cannot all have it). */
const MIN_COLUMN_WIDTH = 30;

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const max = (values: number[]) => values.reduce((a, b) => Math.max(a, b), 0);

export function renderTable(ctx: Ctx, table: Tokens.Table): void {
  const { doc } = ctx;
  const size = ctx.size * 0.9;
  const pad = 4;
  const cols = table.header.length;
  const cellText = (cell: Tokens.TableCell | undefined) => breakLongRuns(plainText(cell?.tokens));
  const header = table.header.map(cellText);
  const rows = table.rows.map((r) => header.map((_, i) => cellText(r[i])));

  // Column widths follow the content: each column gets its longest word as a minimum (at least
  // MIN_COLUMN_WIDTH, so long-word neighbours cannot squeeze a column to nothing) and shares the
  // rest in proportion to its text length.
  // [longest word, whole text] per cell, the header in its bold face.
  const natural = (cells: string[], bold: boolean) => {
    setStyle(doc, { font: bold ? 'bold' : 'regular', size });
    return cells.map((c) => [max(c.split(/[\s\u200b]+/).map((w) => doc.widthOfString(w))), doc.widthOfString(c)]);
  };
  const measured = [natural(header, true), ...rows.map((r) => natural(r, false))];
  const floor = Math.min(MIN_COLUMN_WIDTH, ctx.width / cols);
  const minW = header.map((_, i) => Math.max(floor, max(measured.map((m) => m[i][0])) + 2 * pad));
  const wantW = header.map((_, i) => Math.max(minW[i], max(measured.map((m) => m[i][1])) + 2 * pad));
  const totalWant = sum(wantW);
  const totalMin = sum(minW);
  let widths: number[];
  if (totalWant <= ctx.width) {
    // Stretch to the full width so tables line up with the text column.
    widths = wantW.map((w) => (w * ctx.width) / totalWant);
  } else if (totalMin <= ctx.width) {
    const extra = wantW.map((w, i) => w - minW[i]);
    const extraSum = sum(extra) || 1;
    widths = minW.map((m, i) => m + ((ctx.width - totalMin) * extra[i]) / extraSum);
  } else {
    // Not even the minimums fit (long words, already cut to MAX_RUN characters): columns whose
    // minimum is within a fair share keep it, the others share what is left equally.
    widths = [...minW];
    let open = minW.map((_, i) => i);
    let rest = ctx.width;
    for (;;) {
      const fair = rest / open.length;
      const narrow = open.filter((i) => minW[i] <= fair);
      if (narrow.length === 0 || narrow.length === open.length) break;
      rest -= sum(narrow.map((i) => minW[i]));
      open = open.filter((i) => minW[i] > fair);
    }
    for (const i of open) widths[i] = rest / open.length;
  }
  const xs = widths.map((_, i) => ctx.left + sum(widths.slice(0, i)));
  const align = (i: number): 'left' | 'right' | 'center' => (table.align[i] === 'right' ? 'right' : table.align[i] === 'center' ? 'center' : 'left');

  const measure = (cells: string[], bold: boolean) => {
    setStyle(doc, { font: bold ? 'bold' : 'regular', size });
    return Math.max(...cells.map((c, i) => doc.heightOfString(c || ' ', { width: widths[i] - 2 * pad }))) + 2 * pad;
  };
  const drawRow = (cells: string[], bold: boolean, y: number, h: number) => {
    if (bold) doc.save().rect(ctx.left, y, ctx.width, h).fill(COLOR.headerFill).restore();
    setStyle(doc, { font: bold ? 'bold' : 'regular', size, color: ctx.color });
    for (let i = 0; i < cols; i++) {
      doc.text(cells[i] ?? '', xs[i] + pad, y + pad, { width: widths[i] - 2 * pad, align: align(i) });
    }
    doc.save().lineWidth(0.5).strokeColor(COLOR.rule);
    doc.rect(ctx.left, y, ctx.width, h).stroke();
    for (let i = 1; i < cols; i++)
      doc
        .moveTo(xs[i], y)
        .lineTo(xs[i], y + h)
        .stroke();
    doc.restore();
  };

  // Rows are placed like the invoice's item rows (itemTable.ts): a row that fits on a fresh page
  // moves there whole, a row taller than a page is split between lines of its cells, and every
  // page repeats the header row. A header taller than a third of a page is not repeated (it would
  // leave the rows little room); it is then split like a row.
  const headerH = measure(header, true);
  const capacity = CONTENT_BOTTOM - doc.page.margins.top;
  const repeatHeader = headerH <= capacity / 3;
  const rowRoom = capacity - (repeatHeader ? headerH : 0);
  let y = doc.y + 2;
  // True while nothing but the repeated header is on the current page.
  let fresh = false;
  let rowsOnPage = 0;
  const newPage = () => {
    doc.addPage();
    y = doc.y;
    fresh = true;
    rowsOnPage = 0;
    if (repeatHeader) {
      drawRow(header, true, y, headerH);
      y += headerH;
    }
  };
  // Keep the header with the first row, or with the first lines of a row taller than a page.
  const firstPart = (h: number, room: number) => (h <= room ? h : Math.min(h, 60));
  const firstRowH = rows.length ? measure(rows[0], false) : 0;
  const keep = repeatHeader ? headerH + firstPart(firstRowH, rowRoom) : firstPart(headerH, capacity);
  if (y + keep > CONTENT_BOTTOM) {
    doc.addPage();
    y = doc.y;
    fresh = true;
  }

  const lines = [{ cells: header, bold: true }, ...rows.map((cells) => ({ cells, bold: false }))];
  for (const { cells, bold } of lines) {
    let pending: string[] | null = cells;
    while (pending) {
      const h = measure(pending, bold);
      if (y + h <= CONTENT_BOTTOM) {
        drawRow(pending, bold, y, h);
        y += h;
        if (!bold) rowsOnPage++;
        fresh = false;
        pending = null;
        continue;
      }
      if (rowsOnPage > 0 && h <= rowRoom) {
        newPage();
        continue;
      }
      setStyle(doc, { font: bold ? 'bold' : 'regular', size });
      let parts: Array<[string, string]> = pending.map((c, i) => splitToFit(doc, c, widths[i] - 2 * pad, CONTENT_BOTTOM - y - 2 * pad));
      if (!parts.some(([head, rest]) => head && rest)) {
        if (!fresh) {
          newPage();
          continue;
        }
        // Not even one line fits on an empty page (cannot happen with sane sizes): print the
        // first word of each cell anyway so the loop always advances.
        parts = pending.map((c): [string, string] => {
          const [word, ...others] = c.split(/(?<=[\s\u200b])/);
          return [word.trimEnd(), others.join('').trimStart()];
        });
      }
      const heads = parts.map(([head]) => head);
      const partH = measure(heads, bold);
      drawRow(heads, bold, y, partH);
      y += partH;
      fresh = false;
      const rests = parts.map(([, rest]) => rest);
      pending = rests.some(Boolean) ? rests : null;
      if (pending) newPage();
      else if (!bold) rowsOnPage++;
    }
  }
  doc.x = ctx.left;
  doc.y = y + ctx.size * 0.8;
}
