/** Turns seller and buyer data into the lines printed in letterhead, address window and footer. */
import type { PartyView, SellerView } from '../../domain/invoiceView';
import { addressLines } from './format';
import { singleLine } from './layout';

/**
 * Company when known, else the person's name; on one line, since it goes into one-line slots
 * (footer, sender line, running header, PDF metadata) and the settings allow a line break.
 */
export function displayName(party: PartyView): string {
  return singleLine(party.company?.trim() || party.name?.trim() || '');
}

/** Contact person printed under the company, when it is a different name. */
export function contactName(party: PartyView): string | null {
  const company = party.company?.trim();
  const name = party.name?.trim();
  return company && name && name !== company ? name : null;
}

/** IBAN in groups of four, as printed on paper (DIN 5008): "AT61 1904 3002 3457 3201". */
export function formatIban(iban: string): string {
  return iban
    .replace(/\s+/g, '')
    .toUpperCase()
    .replace(/(.{4})(?=.)/g, '$1 ');
}

/** Recipient block in the address window. */
export function recipientLines(party: PartyView): { strong: string[]; normal: string[] } {
  const contact = contactName(party);
  const normal = [...(contact ? [contact] : []), ...addressLines(party.address)];
  if (party.vatId) normal.push(`UID: ${party.vatId}`);
  return { strong: [displayName(party)], normal };
}

/** One-line sender above the address window (DIN 5008 "Rücksendeangabe"). */
export function senderLine(seller: SellerView): string {
  return [displayName(seller), ...addressLines(seller.address)].join(' · ');
}

/** Seller's contact details for the letterhead. */
export function sellerContactLines(seller: SellerView): string[] {
  const lines = [...addressLines(seller.address)];
  if (seller.phone) lines.push(`Tel.: ${seller.phone}`);
  if (seller.email) lines.push(seller.email);
  if (seller.vatId) lines.push(`UID: ${seller.vatId}`);
  if (seller.taxNumber) lines.push(`Steuernummer: ${seller.taxNumber}`);
  return lines;
}

/** Three footer columns repeated on every page: who, tax identity, bank. */
export function footerColumns(seller: SellerView): string[][] {
  const who = [displayName(seller), ...addressLines(seller.address)];
  const tax: string[] = [];
  if (seller.vatId) tax.push(`UID: ${seller.vatId}`);
  if (seller.taxNumber) tax.push(`Steuernummer: ${seller.taxNumber}`);
  if (seller.email) tax.push(seller.email);
  if (seller.phone) tax.push(`Tel.: ${seller.phone}`);
  const bank: string[] = [];
  if (seller.iban) bank.push(`IBAN: ${formatIban(seller.iban)}`);
  if (seller.bic) bank.push(`BIC: ${seller.bic}`);
  return [who, tax, bank];
}
