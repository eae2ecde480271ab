import type { ConnectorSettings } from '../../domain/connectorSettings';
import { postIncomingInvoice, postRefund, PostingError, type PostedEntry } from '../../ledger/posting';
import type { NormalizedEvent } from '../../providers/payments/types';
import type { CommandContext } from '../types';
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
  invoice: { id: string; totalGross: string };
  /** A refund's payment invoice, whose entry the refund's entry reverses. */
  relatedInvoiceId: string | null;
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
  if (draft.currency !== a.ledgerCurrency) {
    // The ledger is kept in the tenant's currency; converting needs the rate of the day, which the
    // event does not carry. Booked by hand instead of at a made-up rate.
    return skipped(`${draft.currency} differs from the ledger currency ${a.ledgerCurrency}: post it manually at the day's exchange rate`);
  }
  const description = `${PROVIDER_LABEL[event.provider]} ${draft.externalId} – ${a.supplier.name}`;
  const toPost = {
    id: a.invoice.id,
    tenantId: actor.tenantId,
    supplierId: a.supplier.supplierId,
    invoiceDate: draft.invoiceDate,
    totalGross: a.invoice.totalGross,
    invoiceNumber: draft.externalId,
    relatedInvoiceId: a.relatedInvoiceId,
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
  const rev = entry.reversesEntryId ? `, reverses entry ${entry.reversesEntryId}` : '';
  return {
    entry,
    warning: null,
    step: step(
      'autoPost',
      'posted',
      `debit ${entry.debitAccount} / credit ${entry.creditAccount} ${entry.amount} ${draft.currency} (expense account from ${entry.expenseSource}${rev}; entry ${entry.entryId})`,
    ),
  };
}
