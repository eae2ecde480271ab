/**
 * The payload of an EPC QR code ("GiroCode", EPC069-12 "Quick Response Code: Guidelines to
 * Enable Data Capture for the Initiation of a SEPA Credit Transfer", version 002): twelve
 * lines a banking app turns into a filled-in SEPA credit transfer. docs/epc-qr.md.
 */
import { normalizeIban } from './iban';
import { dec } from './money';

export interface EpcPayment {
  beneficiaryName: string;
  iban: string;
  bic?: string | null;
  /** Decimal string in EUR, e.g. "1234.50". */
  amount: string;
  /** Unstructured remittance information (line 11): what the payer writes in the transfer. */
  remittance: string;
}

const MAX_NAME = 70;
const MAX_REMITTANCE = 140;
/** The standard's whole payload limit in bytes. */
const MAX_BYTES = 331;

/**
 * A name on one line and within 70 characters: a line break would shift every following line of
 * the payload, so a user's multi-line company name is joined like the PDF's one-line slots.
 */
function oneLine(text: string, max: number): string {
  const flat = text
    .split(/\r\n|[\r\n\u2028\u2029\v\f]/)
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ');
  return [...flat].slice(0, max).join('').trim();
}

/**
 * The payload, or null when there is nothing a banking app could pay: no valid amount (EPC069-12
 * allows EUR 0.01 to 999999999.99), an empty name or reference, or more than 331 bytes.
 */
export function epcQrPayload(p: EpcPayment): string | null {
  const amount = dec(p.amount);
  if (!amount.isFinite() || amount.lt('0.01') || amount.gt('999999999.99')) return null;
  const name = oneLine(p.beneficiaryName, MAX_NAME);
  const remittance = oneLine(p.remittance, MAX_REMITTANCE);
  const iban = normalizeIban(p.iban);
  if (!name || !remittance || !/^[A-Z]{2}\d{2}[A-Z0-9]{1,30}$/.test(iban)) return null;
  const lines = [
    'BCD', // service tag
    '002', // version: the BIC is optional within the EEA
    '1', // character set 1 = UTF-8
    'SCT', // identification: SEPA credit transfer
    (p.bic ?? '').replace(/\s+/g, '').toUpperCase(),
    name,
    iban,
    `EUR${amount.toFixed(2)}`,
    '', // purpose code: none
    '', // structured creditor reference: not used, the invoice number goes unstructured (docs/epc-qr.md)
    remittance,
  ];
  const payload = lines.join('\n');
  return new TextEncoder().encode(payload).length <= MAX_BYTES ? payload : null;
}
