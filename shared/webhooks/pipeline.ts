import type { Knex } from 'knex';
import type { NormalizedEvent } from '../providers/payments/types';
import {
  createIncomingInvoiceFromEvent,
  draftFromEvent,
  DuplicateInvoiceError,
} from '../commands/webhooks/createIncomingInvoiceFromEvent';
import { postIncomingInvoice, postRefund, PostingError, type PostedEntry } from '../ledger/posting';
import { eventLockKey, lockKey, moneyLockKey } from './locks';
import { resolveSupplier, type SupplierResolution } from './resolveSupplier';

/**
 * The provider-agnostic part of the webhook pipeline (spec "Processing pipeline", steps 3–6), run
 * on an already verified NormalizedEvent inside the caller's transaction. The worker job commits
 * it; POST /api/connectors/<slug>/test-webhook runs the very same code and rolls back.
 *
 * Exactly once: work on one money movement is serialized by an advisory lock on
 * (tenant, provider, externalId); under it an existing invoice means duplicate, before anything
 * (not even a supplier) is created. The unique index invoices_external_unique stays the final
 * guard: should it still refuse the insert, the savepoint with the supplier and the invoice is
 * rolled back and the event is a duplicate. Journal entries are unique per invoice.
 */
export type StepName = 'signature' | 'tenant' | 'supplier' | 'invoice' | 'duplicate' | 'autoPost';

export interface StepResult {
  step: StepName;
  result: string;
  detail: string;
}

export interface ConnectorSettings {
  autoPost?: boolean;
  defaultSupplierId?: string | null;
  expenseAccount?: string | null;
  clearingAccount?: string | null;
}

export interface MovementOutcome {
  /** created: an invoice was created; duplicate: it existed; nothing: the event books nothing. */
  outcome: 'created' | 'duplicate' | 'nothing';
  invoiceId: string | null;
  entry: PostedEntry | null;
  steps: StepResult[];
  /** A problem that did not stop the booking (auto-post refused); kept on the log row. */
  warning: string | null;
}

export interface PipelineInput {
  tenantId: string;
  event: NormalizedEvent;
  settings: ConnectorSettings;
  /** The webhook log row being processed (excluded from the event-id duplicate check); none for test-webhook. */
  eventRowId?: string | null;
}

export interface PipelineResult {
  /** The log row's final status. */
  status: 'processed' | 'duplicate';
  invoiceId: string | null;
  steps: StepResult[];
  related: MovementOutcome[];
  warning: string | null;
}

/** Transient by design: the job throws it so BullMQ retries with backoff (ordering of related events). */
export class RetryLaterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RetryLaterError';
  }
}

const PROVIDER_LABEL = { stripe: 'Stripe', paypal: 'PayPal', mollie: 'Mollie', bank: 'Bank' } as const;

export async function runPipeline(trx: Knex.Transaction, input: PipelineInput): Promise<PipelineResult> {
  const { event } = input;
  // Mollie: movements the same verified answer proved (the payment, older refunds), oldest first,
  // each under the same duplicate rule, so a lost or raced delivery cannot lose a booking.
  const related: MovementOutcome[] = [];
  for (const r of event.related ?? []) related.push(await processMovement(trx, { ...input, event: r, eventRowId: null }, false));
  const main = await processMovement(trx, input, true);
  const createdAny = main.outcome === 'created' || related.some((r) => r.outcome === 'created');
  return {
    status: main.outcome === 'duplicate' && !createdAny ? 'duplicate' : 'processed',
    invoiceId: main.invoiceId,
    steps: main.steps,
    related,
    warning: [main.warning, ...related.map((r) => r.warning)].filter(Boolean).join('; ') || null,
  };
}

async function processMovement(trx: Knex.Transaction, input: PipelineInput, isMain: boolean): Promise<MovementOutcome> {
  const { tenantId, event, settings } = input;
  const steps: StepResult[] = [];
  const step = (s: StepName, result: string, detail: string) => steps.push({ step: s, result, detail });

  if (event.kind !== 'payment' && event.kind !== 'refund') {
    // Failure, expiry and ignored events book nothing; a redelivery of one is still a duplicate.
    const what = event.kind === 'failure' ? `${event.eventType} is a failed or expired payment` : `${event.eventType} is not booked by this connector`;
    step('supplier', 'skipped', `${what}: no supplier needed`);
    step('invoice', 'skipped', `${what}: nothing is created`);
    if (isMain) {
      await lockKey(trx, eventLockKey(tenantId, event.provider, event.eventId));
      const earlier = await trx('webhookEvents')
        .where({ tenantId, provider: event.provider, externalId: event.eventId, status: 'processed' })
        .modify((q) => (input.eventRowId ? q.whereNot({ id: input.eventRowId }) : q))
        .first('id');
      if (earlier) {
        step('duplicate', 'duplicate', `event ${event.eventId} was processed before (log entry ${earlier.id})`);
        step('autoPost', 'skipped', 'nothing to post');
        return { outcome: 'duplicate', invoiceId: null, entry: null, steps, warning: null };
      }
    }
    step('duplicate', 'unique', `event ${event.eventId} not seen before`);
    step('autoPost', 'skipped', 'nothing to post');
    return { outcome: 'nothing', invoiceId: null, entry: null, steps, warning: null };
  }

  const draft = draftFromEvent(event);
  await lockKey(trx, moneyLockKey(tenantId, event.provider, draft.externalId));
  const existing = await trx('invoices').where({ tenantId, source: event.provider, externalId: draft.externalId }).first('id');
  const duplicateOf = (invoiceId: string | null): MovementOutcome => {
    step('supplier', 'skipped', 'duplicate: nothing is created');
    step('invoice', 'skipped', 'duplicate: nothing is created');
    step('duplicate', 'duplicate', `an incoming invoice with source ${event.provider} and externalId ${draft.externalId} exists (${invoiceId}); nothing created`);
    step('autoPost', 'skipped', 'duplicate: nothing to post');
    return { outcome: 'duplicate', invoiceId, entry: null, steps, warning: null };
  };
  if (existing) return duplicateOf(existing.id);

  let supplier: SupplierResolution;
  let invoice: { id: string; totalGross: string };
  let relatedInvoiceId: string | null = null;
  let originalSupplier: { supplierId: string; name: string } | null = null;
  if (event.kind === 'refund' && event.originalExternalId) {
    if (input.eventRowId) {
      // Ordering: the refund may overtake its payment. Ask for the payment's pending event BEFORE
      // looking up its invoice: the payment's invoice and its event status commit together, so in
      // this order we either see the payment still pending (retry later) or see its invoice —
      // the other order could miss both when the payment commits between the two reads.
      const waiting = await trx('webhookEvents')
        .where({ tenantId, provider: event.provider, moneyExternalId: event.originalExternalId, status: 'pending' })
        .whereNot({ id: input.eventRowId })
        .first('id');
      if (waiting) throw new RetryLaterError(`the original payment ${event.originalExternalId} is still being processed (log entry ${waiting.id})`);
    }
    const original = await trx('invoices as i')
      .leftJoin('suppliers as s', 's.id', 'i.supplierId')
      .where({ 'i.tenantId': tenantId, 'i.source': event.provider, 'i.externalId': event.originalExternalId })
      .first('i.id', 'i.supplierId', 's.name', 's.deletedAt');
    relatedInvoiceId = original?.id ?? null;
    if (original?.supplierId && !original.deletedAt) originalSupplier = { supplierId: original.supplierId, name: original.name };
  }
  try {
    // A savepoint: if the unique index still refuses the invoice, the supplier goes with it.
    [supplier, invoice] = await trx.transaction(async (sp) => {
      // A refund belongs to the payment's supplier, whatever the refund event names.
      const s: SupplierResolution = originalSupplier
        ? { ...originalSupplier, how: 'original' }
        : await resolveSupplier(sp, tenantId, event.provider, event.counterparty ?? {}, settings.defaultSupplierId);
      const inv = await createIncomingInvoiceFromEvent(sp, { tenantId, event, draft, supplierId: s.supplierId, relatedInvoiceId });
      return [s, inv] as const;
    });
  } catch (err) {
    if (err instanceof DuplicateInvoiceError) {
      steps.length = 0;
      const winner = await trx('invoices').where({ tenantId, source: event.provider, externalId: draft.externalId }).first('id');
      return duplicateOf(winner?.id ?? null);
    }
    throw err;
  }
  const how: Record<SupplierResolution['how'], string> = {
    original: 'the supplier of the refunded payment',
    default: 'default supplier from the connector settings',
    merchantId: `matched by ${event.provider} merchant id ${event.counterparty?.merchantId}`,
    email: `matched by e-mail ${event.counterparty?.email}`,
    created: 'auto-created from the event’s counterparty',
    placeholder: 'the event names no counterparty: placeholder supplier',
  };
  step('supplier', supplier.how === 'created' || supplier.how === 'placeholder' ? 'created' : 'matched', `${supplier.name} (${supplier.supplierId}): ${how[supplier.how]}`);
  const link = event.kind === 'refund' ? (relatedInvoiceId ? `, refund of invoice ${relatedInvoiceId}` : `, original ${event.originalExternalId ?? '(unknown)'} not found`) : '';
  step('invoice', 'created', `eingangsrechnung ${draft.externalId} over ${invoice.totalGross} ${draft.currency} dated ${draft.invoiceDate}, status bezahlt${link} (${invoice.id})`);
  step('duplicate', 'unique', `no earlier incoming invoice with source ${event.provider} and externalId ${draft.externalId}`);

  let entry: PostedEntry | null = null;
  let warning: string | null = null;
  const tenant = await trx('tenants').where({ id: tenantId }).first('currency');
  const ledgerCurrency = tenant?.currency ?? 'EUR';
  if (!settings.autoPost) {
    step('autoPost', 'skipped', 'auto-post is off in the connector settings');
  } else if (draft.currency !== ledgerCurrency) {
    // The ledger is kept in the tenant's currency; converting needs the rate of the day, which the
    // event does not carry. Booked by hand instead of at a made-up rate.
    step('autoPost', 'skipped', `${draft.currency} differs from the ledger currency ${ledgerCurrency}: post it manually at the day's exchange rate`);
  } else {
    const description = `${PROVIDER_LABEL[event.provider]} ${draft.externalId} – ${supplier.name}`;
    const toPost = { id: invoice.id, tenantId, supplierId: supplier.supplierId, invoiceDate: draft.invoiceDate, totalGross: invoice.totalGross, invoiceNumber: draft.externalId, relatedInvoiceId };
    try {
      entry = await trx.transaction((sp) =>
        event.kind === 'refund' ? postRefund(sp, toPost, event.provider, settings, description) : postIncomingInvoice(sp, toPost, event.provider, settings, description),
      );
    } catch (err) {
      if (!(err instanceof PostingError)) throw err;
      // The invoice stands; only the posting waits for the settings to be fixed.
      warning = `auto-post failed: ${err.message}`;
      step('autoPost', 'failed', err.message);
    }
    if (entry) {
      const rev = entry.reversesEntryId ? `, reverses entry ${entry.reversesEntryId}` : '';
      step('autoPost', 'posted', `debit ${entry.debitAccount} / credit ${entry.creditAccount} ${entry.amount} ${draft.currency} (expense account from ${entry.expenseSource}${rev}; entry ${entry.entryId})`);
    } else if (!warning) {
      step('autoPost', 'skipped', 'the invoice is already posted');
    }
  }
  return { outcome: 'created', invoiceId: invoice.id, entry, steps, warning };
}
