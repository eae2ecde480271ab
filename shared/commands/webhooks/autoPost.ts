import type { ConnectorSettings } from '../../domain/connectorSettings';
import { postIncomingInvoice, postRefund, PostingError, type PostedEntry } from '../../ledger/posting';
import type { NormalizedEvent } from '../../providers/payments/types';
import type { CommandContext } from '../types';
import { toEur } from '../../domain/exchangeRates';
import type { IncomingInvoiceDraft } from './createIncomingInvoiceFromEvent';
import { PROVIDER_LABEL, type SupplierResolution } from './resolveSupplier';
import { step, type StepResult } from './steps';

export interface AutoPostInput {
  event: NormalizedEvent;
  draft: IncomingInvoiceDraft;
  settings: ConnectorSettings;
  /** The tenant's currency, in which its ledger is kept. */
  ledgerCurrency: string;
  supplier: SupplierResolution;
  invoice: BookedInvoice;
  /** A refund's payment invoice, whose entry the refund's entry reverses. */
  relatedInvoiceId: string | null;
}

/** The incoming invoice a movement booked: its gross in the document's currency and, for another currency, its ECB rate. */
export interface BookedInvoice {
  id: string;
  totalGross: string;
  exchangeRate: string | null;
  /** None of its lines owes purchase tax (posting.ts, owesPurchaseTax): the posting does not read them back. */
  noPurchaseTaxLines?: boolean;
}

export interface AutoPostOutcome {
  entry: PostedEntry | null;
  /** Why a posting was refused; the invoice stands, and the log row keeps the reason. */
  warning: string | null;
  step: StepResult;
}

/**
 * Pipeline step 6: post the new incoming invoice when the connector says so (docs/ledger.md,
 * "Posting rules"). A posting the chart cannot satisfy does not undo the invoice: PostingError
 * becomes a warning, and no savepoint is needed because posting throws it only before it writes
 * anything (shared/ledger/posting.ts); any other error fails the caller's transaction anyway.
 */
export async function autoPost({ trx, actor }: CommandContext, a: AutoPostInput): Promise<AutoPostOutcome> {
  const { event, draft, settings } = a;
  const skipped = (reason: string): AutoPostOutcome => ({ entry: null, warning: null, step: step('autoPost', 'skipped', reason) });
  if (!settings.autoPost) return skipped('auto-post is off in the connector settings');
  // The ledger is kept in the tenant's currency (EUR): another currency is posted at the ECB rate
  // the invoice stored for its day (docs/exchange-rates.md), and by hand when it has none.
  let totalGross = a.invoice.totalGross;
  const converted = draft.currency !== a.ledgerCurrency;
  if (converted) {
    if (a.ledgerCurrency !== 'EUR' || !a.invoice.exchangeRate) {
      return skipped(`${draft.currency} differs from the ledger currency ${a.ledgerCurrency} and the ECB has no rate for the day: post it manually`);
    }
    totalGross = toEur(totalGross, a.invoice.exchangeRate);
  }
  const description = postingDescription(event, draft, a.supplier);
  const toPost = {
    id: a.invoice.id,
    tenantId: actor.tenantId,
    supplierId: a.supplier.supplierId,
    invoiceDate: draft.invoiceDate,
    totalGross,
    invoiceNumber: draft.externalId,
    relatedInvoiceId: a.relatedInvoiceId,
    noPurchaseTaxLines: a.invoice.noPurchaseTaxLines,
  };
  let entry: PostedEntry | null;
  try {
    entry = await (event.kind === 'refund'
      ? postRefund(trx, toPost, event.provider, settings, description)
      : postIncomingInvoice(trx, toPost, event.provider, settings, description));
  } catch (err) {
    if (!(err instanceof PostingError)) throw err;
    return { entry: null, warning: `auto-post failed: ${err.message}`, step: step('autoPost', 'failed', err.message) };
  }
  if (!entry) return skipped('the invoice is already posted');
  return postedOutcome(
    entry,
    a.ledgerCurrency,
    converted ? { totalGross: a.invoice.totalGross, currency: draft.currency, rate: a.invoice.exchangeRate } : null,
  );
}

/** The journal entry's text for a movement. */
export const postingDescription = (event: NormalizedEvent, draft: IncomingInvoiceDraft, supplier: SupplierResolution): string =>
  `${PROVIDER_LABEL[event.provider]} ${draft.externalId} – ${supplier.name}`;

/** A posted entry as the pipeline reports it (also for the set-wise booking, bookPlainPayments). */
export function postedOutcome(
  entry: PostedEntry,
  ledgerCurrency: string,
  converted: { totalGross: string; currency: string; rate: string | null } | null,
): AutoPostOutcome {
  const rev = entry.reversesEntryId ? `, reverses entry ${entry.reversesEntryId}` : '';
  return {
    entry,
    warning: null,
    step: step(
      'autoPost',
      'posted',
      `debit ${entry.debitAccount} / credit ${entry.creditAccount} ${entry.amount} ${ledgerCurrency}${converted ? ` (${converted.totalGross} ${converted.currency} at ${converted.rate} per EUR)` : ''} (expense account from ${entry.expenseSource}${rev}; entry ${entry.entryId})`,
    ),
  };
}
