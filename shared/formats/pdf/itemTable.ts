/**
 * The line-item table. Rows are measured before drawing; a row that does not fit moves to the
 * next page as a whole and the column header is repeated there, so every page that shows
 * items can be read on its own (an auditor checking page 3 sees what the columns mean).
 * Only a description longer than a whole page is split across pages.
 */
import type { InvoiceItemView } from '../../domain/invoiceView';
import { fmtQuantity } from '../../domain/money';
import { formatMoney, formatPercent, formatQuantity } from './format';
import { TABLE_HEADERS } from './invoiceTexts';
import { COLOR, CONTENT_BOTTOM, CONTENT_LEFT, CONTENT_WIDTH, MARGIN, hRule, setStyle, type TextStyle } from './layout';
import { splitToFit } from './textBreaks';

interface Column {
  key: keyof typeof TABLE_HEADERS;
  width: number;
  align: 'left' | 'right';
}

const PAD = 3;
const HEADER_HEIGHT = 17;
const FONT_SIZE = 8.5;

const FIXED: Column[] = [
  { key: 'position', width: 27, align: 'left' },
  { key: 'description', width: 0, align: 'left' },
  { key: 'quantity', width: 46, align: 'right' },
  { key: 'unit', width: 46, align: 'left' },
  { key: 'unitPrice', width: 72, align: 'right' },
  { key: 'taxRate', width: 38, align: 'right' },
  { key: 'net', width: 78, align: 'right' },
];

const COLUMNS: Array<Column & { x: number }> = (() => {
  const fixed = FIXED.reduce((sum, c) => sum + c.width, 0);
  let x = CONTENT_LEFT;
  return FIXED.map((c) => {
    const width = c.key === 'description' ? CONTENT_WIDTH - fixed : c.width;
    const col = { ...c, width, x };
    x += width;
    return col;
  });
})();

function cells(item: InvoiceItemView, currency: string): Record<Column['key'], string> {
  return {
    position: String(item.position),
    description: item.description,
    // The view's quantity is a JSON number; print it from its exact decimal form.
    quantity: formatQuantity(fmtQuantity(item.quantity)),
    unit: item.unit ?? '',
    unitPrice: formatMoney(item.unitPrice, currency),
    taxRate: formatPercent(item.taxRate),
    net: formatMoney(item.netAmount, currency),
  };
}

const BODY: TextStyle = { size: FONT_SIZE };

function rowHeight(doc: PDFKit.PDFDocument, values: Record<Column['key'], string>): number {
  setStyle(doc, BODY);
  let h = doc.currentLineHeight(true);
  for (const col of COLUMNS) {
    h = Math.max(h, doc.heightOfString(values[col.key] || ' ', { width: col.width - 2 * PAD }));
  }
  return h + 2 * PAD + 1;
}

function drawHeader(doc: PDFKit.PDFDocument, y: number): number {
  doc.save().rect(CONTENT_LEFT, y, CONTENT_WIDTH, HEADER_HEIGHT).fill(COLOR.headerFill).restore();
  setStyle(doc, { font: 'bold', size: 8 });
  for (const col of COLUMNS) {
    doc.text(TABLE_HEADERS[col.key], col.x + PAD, y + 5, { width: col.width - 2 * PAD, align: col.align, lineBreak: false });
  }
  hRule(doc, y + HEADER_HEIGHT, CONTENT_LEFT, CONTENT_LEFT + CONTENT_WIDTH, COLOR.rule, 0.7);
  return y + HEADER_HEIGHT;
}

function drawRow(doc: PDFKit.PDFDocument, values: Record<Column['key'], string>, y: number, height: number): void {
  setStyle(doc, BODY);
  for (const col of COLUMNS) {
    doc.text(values[col.key], col.x + PAD, y + PAD + 1, { width: col.width - 2 * PAD, align: col.align });
  }
  hRule(doc, y + height, CONTENT_LEFT, CONTENT_LEFT + CONTENT_WIDTH, COLOR.faint, 0.4);
}

const DESCRIPTION = COLUMNS.find((c) => c.key === 'description')!;

/** Items in ascending position; starts at doc.y and leaves doc.y below the last row. */
export function drawItemTable(doc: PDFKit.PDFDocument, items: InvoiceItemView[], currency: string): void {
  const sorted = [...items].sort((a, b) => a.position - b.position);
  let y = doc.y;
  const firstHeight = sorted.length ? rowHeight(doc, cells(sorted[0], currency)) : 0;
  if (y + HEADER_HEIGHT + Math.min(firstHeight, 60) > CONTENT_BOTTOM) {
    doc.addPage();
    y = doc.y;
  }
  y = drawHeader(doc, y);
  let rowsOnPage = 0;
  const newPage = () => {
    doc.addPage();
    y = drawHeader(doc, doc.y);
    rowsOnPage = 0;
  };
  const pageCapacity = CONTENT_BOTTOM - (MARGIN.top + HEADER_HEIGHT);

  for (const item of sorted) {
    let pending: Record<Column['key'], string> | null = cells(item, currency);
    while (pending) {
      const h = rowHeight(doc, pending);
      if (y + h <= CONTENT_BOTTOM) {
        drawRow(doc, pending, y, h);
        y += h;
        rowsOnPage++;
        pending = null;
        continue;
      }
      // A row that fits on a fresh page moves there whole; a row taller than a page is split
      // between description lines, the amounts staying on its first part.
      if (rowsOnPage > 0 && h <= pageCapacity) {
        newPage();
        continue;
      }
      setStyle(doc, BODY);
      const [head, rest] = splitToFit(doc, pending.description, DESCRIPTION.width - 2 * PAD, CONTENT_BOTTOM - y - 2 * PAD - 1);
      if (!head) {
        if (rowsOnPage > 0) {
          newPage();
          continue;
        }
        // Not even one word fits on an empty page (cannot happen with sane sizes): print the
        // first word anyway so the loop always advances.
        const [word, ...others] = pending.description.split(/\s+/);
        const part = { ...pending, description: word };
        drawRow(doc, part, y, rowHeight(doc, part));
        pending = others.length ? { ...CONTINUATION, description: others.join(' ') } : null;
        if (pending) newPage();
        continue;
      }
      const part = { ...pending, description: head };
      const partHeight = rowHeight(doc, part);
      drawRow(doc, part, y, partHeight);
      y += partHeight;
      rowsOnPage++;
      pending = rest ? { ...CONTINUATION, description: rest } : null;
      if (pending) newPage();
    }
  }
  doc.x = CONTENT_LEFT;
  doc.y = y + 8;
}

/** Continuation of a split row: only the description column is filled. */
const CONTINUATION: Record<Column['key'], string> = {
  position: '',
  description: '',
  quantity: '',
  unit: '',
  unitPrice: '',
  taxRate: '',
  net: '',
};
