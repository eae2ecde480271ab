/**
 * The EPC QR code ("GiroCode") in the payment section of an invoice that asks for a transfer in
 * EUR: drawn as filled squares (vector, no image, no transparency: the page stays PDF/A-3b).
 * qrcode (already the dependency of the TOTP enrolment) does the encoding; docs/epc-qr.md.
 */
import QRCode from 'qrcode';
import { epcQrPayload } from '../../domain/epcQr';
import type { DocumentInput } from '../../domain/invoiceView';
import { dec } from '../../domain/money';
import { documentNumber } from './invoiceHeader';
import { COLOR, CONTENT_LEFT, ensureSpace, setStyle } from './layout';
import { displayName } from './parties';

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
  const qr = QRCode.create([{ data: new TextEncoder().encode(payload), mode: 'byte' }], { errorCorrectionLevel: 'M' });
  const count = qr.modules.size;
  ensureSpace(doc, QR_SIZE + 12);
  const top = doc.y + 4;
  const cell = QR_SIZE / count;
  doc.save();
  for (let row = 0; row < count; row++) {
    for (let col = 0; col < count; col++) {
      if (qr.modules.get(row, col)) doc.rect(CONTENT_LEFT + col * cell, top + row * cell, cell, cell);
    }
  }
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
