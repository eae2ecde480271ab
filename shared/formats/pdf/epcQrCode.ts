/**
 * The EPC QR code ("GiroCode") in the payment section of an invoice that asks for a transfer in
 * EUR: drawn as filled rectangles (vector, no image, no transparency: the page stays PDF/A-3b).
 * qrcode (already the dependency of the TOTP enrolment) does the encoding, its mask search done
 * faster in qrMask.ts; docs/epc-qr.md.
 */
import { epcQrPayload } from '../../domain/epcQr';
import type { DocumentInput } from '../../domain/invoiceView';
import { dec } from '../../domain/money';
import { documentNumber } from './invoiceHeader';
import { COLOR, CONTENT_LEFT, ensureSpace, setStyle } from './layout';
import { displayName } from './parties';
import { qrModules } from './qrMask';

/** 30 mm: well above the 2 cm the GiroCode guidelines ask for, and small next to the text. */
const QR_SIZE = 85;
const CAPTION_WIDTH = 260;

/**
 * The payload when the issued document asks for payment by transfer in EUR to the seller's IBAN,
 * else null: not for quotes, credit notes, incoming invoices, drafts (no number yet), cancelled
 * invoices (they print no payment terms), another currency, or nothing due.
 */
export function epcQrOf(input: DocumentInput): string | null {
  const { invoice, seller } = input;
  if (invoice.type !== 'rechnung' || invoice.status === 'entwurf' || invoice.status === 'storniert') return null;
  if (invoice.currency !== 'EUR' || !seller.iban) return null;
  if (dec(invoice.amountDue).lte(0)) return null;
  const number = documentNumber(input);
  if (!number) return null;
  return epcQrPayload({ beneficiaryName: displayName(seller), iban: seller.iban, bic: seller.bic, amount: invoice.amountDue, remittance: number });
}

/** Draws the code at the left of the content column with a one-line caption beside it. */
export function drawEpcQr(doc: PDFKit.PDFDocument, payload: string): void {
  // Level M as EPC069-12 prescribes; byte mode carries the UTF-8 of character set 1.
  // qrcode's symbol, its mask search done faster (qrMask.ts).
  const qr = qrModules([{ data: new TextEncoder().encode(payload), mode: 'byte' }], 'M');
  const count = qr.size;
  ensureSpace(doc, QR_SIZE + 12);
  const top = doc.y + 4;
  const cell = QR_SIZE / count;
  doc.save();
  // Drawn in module units (one unit = one module, scaled by the transform) and one rectangle per
  // run of dark modules, continued down while the rows below have the same run: the same filled
  // area in 376 short operators instead of 835 with six-decimal coordinates for a 10-item
  // invoice's code, so the page's content stream and its deflate are about a third smaller. The
  // QR test decodes the rendered page.
  doc.transform(cell, 0, 0, cell, CONTENT_LEFT, top);
  for (const r of moduleRectangles(count, (row, col) => qr.data[row * count + col] === 1)) doc.rect(r.col, r.row, r.width, r.height);
  doc.fillColor('#000000').fill();
  doc.restore();
  setStyle(doc, { size: 8, color: COLOR.muted });
  doc.text(
    'Zahlen mit Code: Scannen Sie den QR-Code (GiroCode) mit Ihrer Banking-App: Empfänger, IBAN, Betrag und Verwendungszweck sind dann ausgefüllt.',
    CONTENT_LEFT + QR_SIZE + 12,
    top + 4,
    { width: CAPTION_WIDTH, lineGap: 1 },
  );
  doc.x = CONTENT_LEFT;
  doc.y = top + QR_SIZE + 8;
}

/**
 * The dark modules as rectangles in module units: each row's runs, a run merged with the one
 * directly above it when both span the same columns. Covers exactly the dark modules.
 */
export function moduleRectangles(
  size: number,
  dark: (row: number, col: number) => boolean,
): Array<{ row: number; col: number; width: number; height: number }> {
  const done: Array<{ row: number; col: number; width: number; height: number }> = [];
  // The rectangles still open at the previous row, by their first column.
  let open = new Map<number, { row: number; col: number; width: number; height: number }>();
  for (let row = 0; row < size; row++) {
    const next = new Map<number, { row: number; col: number; width: number; height: number }>();
    let col = 0;
    while (col < size) {
      if (!dark(row, col)) {
        col++;
        continue;
      }
      const start = col;
      while (col < size && dark(row, col)) col++;
      const above = open.get(start);
      if (above && above.width === col - start) {
        above.height++;
        open.delete(start);
        next.set(start, above);
      } else next.set(start, { row, col: start, width: col - start, height: 1 });
    }
    for (const r of open.values()) done.push(r);
    open = next;
  }
  for (const r of open.values()) done.push(r);
  return done;
}
