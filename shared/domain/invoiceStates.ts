import { immutable, unprocessable, type AppError } from '../errors';
import type { InvoiceStatus, InvoiceType } from './invoiceView';

/**
 * The invoice state machine: one table, one function (transitions and refusal codes:
 * docs/invoices.md, "States and transitions"). Commands call assertTransition() after locking the
 * row, so a refused transition never half-happens. A finalized document's content never changes
 * (GoBD, BAO § 131): after entwurf only updateMeta (notes, footerText, customFields) is allowed.
 */
export const INVOICE_STATUSES: InvoiceStatus[] = ['entwurf', 'offen', 'teilbezahlt', 'bezahlt', 'storniert'];
export const INVOICE_TYPES: InvoiceType[] = ['rechnung', 'angebot', 'gutschrift', 'eingangsrechnung'];

export type InvoiceEvent = 'update' | 'updateMeta' | 'delete' | 'send' | 'pay' | 'unpay' | 'cancel' | 'convert';

/** from → event → possible targets. */
export const TRANSITIONS: Record<InvoiceStatus, Partial<Record<InvoiceEvent, InvoiceStatus[]>>> = {
  entwurf: { update: ['entwurf'], updateMeta: ['entwurf'], delete: ['entwurf'], send: ['offen'], convert: ['entwurf'] },
  offen: { updateMeta: ['offen'], send: ['offen'], pay: ['teilbezahlt', 'bezahlt'], cancel: ['storniert'], convert: ['offen'] },
  teilbezahlt: { updateMeta: ['teilbezahlt'], send: ['teilbezahlt'], pay: ['teilbezahlt', 'bezahlt'], unpay: ['offen', 'teilbezahlt'], cancel: ['storniert'] },
  bezahlt: { updateMeta: ['bezahlt'], send: ['bezahlt'], unpay: ['offen', 'teilbezahlt'], cancel: ['storniert'] },
  storniert: { delete: ['storniert'] },
};

/**
 * Per status, events that only some types may take (TYPES_FOR narrowed further). A paid incoming
 * invoice may be cancelled: a webhook creates it bezahlt, and one in a foreign currency or entered
 * wrongly must be voidable, or it blocks the month's reports for good (docs/reports.md
 * "Currency": cancel it, enter the EUR document). Paid sales invoices keep their rule: they are
 * not cancelled (a correction is a credit note of its own).
 */
const STATUS_TYPES: Partial<Record<InvoiceStatus, Partial<Record<InvoiceEvent, InvoiceType[]>>>> = {
  bezahlt: { cancel: ['eingangsrechnung'] },
};

/** Which types an event applies to (all when absent). */
const TYPES_FOR: Partial<Record<InvoiceEvent, InvoiceType[]>> = {
  send: ['rechnung', 'angebot', 'gutschrift'],
  pay: ['rechnung', 'gutschrift', 'eingangsrechnung'],
  unpay: ['rechnung', 'gutschrift', 'eingangsrechnung'],
  cancel: ['rechnung', 'angebot', 'eingangsrechnung'],
  convert: ['angebot'],
};

const EVENT_TEXT: Record<InvoiceEvent, string> = {
  update: 'be edited',
  updateMeta: 'be edited',
  delete: 'be deleted',
  send: 'be sent',
  pay: 'take a payment',
  unpay: 'have a payment reversed',
  cancel: 'be cancelled',
  convert: 'be converted into an invoice',
};

function refuse(event: InvoiceEvent, message: string): AppError {
  return event === 'pay' || event === 'unpay' ? unprocessable(message) : immutable(message);
}

/**
 * The status after `event`, or throws 400 IMMUTABLE / 422 UNPROCESSABLE. For 'pay' the caller
 * says whether the payment settles the invoice (fullyPaid); for 'unpay' (a payment reversed, e.g.
 * a bank match undone) whether anything stays paid (stillPaid).
 */
export function assertTransition(
  from: InvoiceStatus,
  event: InvoiceEvent,
  opts: { type?: InvoiceType; fullyPaid?: boolean; stillPaid?: boolean } = {},
): InvoiceStatus {
  const types = TYPES_FOR[event];
  if (opts.type && types && !types.includes(opts.type)) {
    throw refuse(event, `An invoice of type ${opts.type} cannot ${EVENT_TEXT[event]}`);
  }
  const targets = TRANSITIONS[from]?.[event];
  const narrowed = STATUS_TYPES[from]?.[event];
  if (!targets || (narrowed && !(opts.type && narrowed.includes(opts.type)))) {
    throw refuse(event, `An invoice in status ${from} cannot ${EVENT_TEXT[event]}`);
  }
  if (event === 'pay') return opts.fullyPaid ? 'bezahlt' : 'teilbezahlt';
  if (event === 'unpay') return opts.stillPaid ? 'teilbezahlt' : 'offen';
  return targets[0];
}

export function canTransition(from: InvoiceStatus, event: InvoiceEvent, type?: InvoiceType): boolean {
  try {
    assertTransition(from, event, { type });
    return true;
  } catch {
    return false;
  }
}

/** Finalized = has left the draft state; its content is frozen. */
export const isFinalized = (status: InvoiceStatus) => status !== 'entwurf';
