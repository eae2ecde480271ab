import type { Knex } from 'knex';
import type { ConnectorSettings } from '../../domain/connectorSettings';
import type { PostedEntry } from '../../ledger/posting';
import { eventLockKey, lockKey, moneyLockKey } from '../../locks';
import { Invoice } from '../../models/Invoice';
import { Tenant } from '../../models/Tenant';
import { WebhookEvent } from '../../models/WebhookEvent';
import type { NormalizedEvent } from '../../providers/payments/types';
import type { CommandContext } from '../types';
import { emitPaymentEvents } from '../outboundWebhooks/emitEvent';
import { type AutoPostOutcome, type BookedInvoice, autoPost } from './autoPost';
import { createIncomingInvoiceFromEvent, draftFromEvent, type IncomingInvoiceDraft } from './createIncomingInvoiceFromEvent';
import { DuplicateInvoiceError } from './errors';
import { flushOutcomes } from './outcomes';
import { findRefundedPayment, recordPaymentRefs, type RefundedPayment } from './refundedPayment';
import { createSupplierFor, findSupplier, forgetPrefetchedSuppliers, type SupplierResolution } from './resolveSupplier';
import { step, type StepResult } from './steps';

/** The tenant's country (its tax rates) and currency (its ledger's). */
export interface TenantLedger {
  country: string | null;
  currency: string | null;
}

export interface BookPaymentEventInput {
  /** Verified: by the adapter at ingest (the job), or just now (test-webhook). */
  event: NormalizedEvent;
  settings: ConnectorSettings;
  /** The webhook log row being booked (left out of the duplicate and ordering checks); none for test-webhook. */
  eventRowId?: string | null;
  /** When the caller read it already (the job does, with the row lock). */
  tenant?: TenantLedger;
  /** The money lock (moneyLockKey) the caller took already in this transaction (the job does, in its first read). */
  lockedMoneyKey?: string | null;
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

export interface BookingResult {
  /** The log row's final status. */
  status: 'processed' | 'duplicate';
  invoiceId: string | null;
  /** The main movement's steps. */
  steps: StepResult[];
  related: MovementOutcome[];
  warning: string | null;
}

/**
 * Book a verified payment event: pipeline steps 3–6 of docs/webhooks.md ("The pipeline job") in the
 * caller's transaction. The job commits it (bookStoredEvents); test-webhook runs it and rolls back.
 * Exactly once: an advisory lock per money movement, under which the unique index
 * invoices_external_unique decides whether the movement is booked already (a refused insert is a
 * duplicate, and writes nothing).
 */
export async function bookPaymentEvent(ctx: CommandContext, input: BookPaymentEventInput): Promise<BookingResult> {
  const { event } = input;
  // Mollie: movements the same verified answer proved (the payment, older refunds), oldest first,
  // each under the same duplicate rule, so a lost or raced delivery cannot lose a booking.
  const related: MovementOutcome[] = [];
  for (const movement of event.related ?? []) related.push(await bookMovement(ctx, { ...input, event: movement, eventRowId: null }, false));
  // The movements just booked in this transaction need no waiting for: a Mollie refund.created
  // carries its payment among them, so another pending delivery of that payment is no reason to
  // retry later (the payment is booked here, and that delivery will end duplicate).
  const bookedAlongside = (event.related ?? []).map((r) => r.externalId).filter((x): x is string => !!x);
  const main = await bookMovement(ctx, { ...input, bookedAlongside }, true);

  return bookingResult(main, related);
}

/** The event's result from its movements' outcomes (also for the set-wise booking, bookPlainPayments). */
export function bookingResult(main: MovementOutcome, related: MovementOutcome[]): BookingResult {
  const createdAny = main.outcome === 'created' || related.some((r) => r.outcome === 'created');
  return {
    status: main.outcome === 'duplicate' && !createdAny ? 'duplicate' : 'processed',
    invoiceId: main.invoiceId,
    steps: main.steps,
    related,
    warning: [main.warning, ...related.map((r) => r.warning)].filter(Boolean).join('; ') || null,
  };
}

type MovementInput = BookPaymentEventInput & {
  /** External ids of the movements this event booked before its main one, in this transaction. */
  bookedAlongside?: string[];
};

/** One money movement (or a non-booking event) through the steps. */
async function bookMovement(ctx: CommandContext, input: MovementInput, isMain: boolean): Promise<MovementOutcome> {
  const { event, settings } = input;
  // Before anything else, also for duplicates and non-booking events: recording a reference
  // twice is a no-op, and a later refund may need it whatever became of this event.
  const recordedRefs = await recordPaymentRefs(ctx, event);
  if (event.kind !== 'payment' && event.kind !== 'refund') return bookNothing(ctx, input, isMain, recordedRefs);

  // The movement's values (refused for good if it cannot be booked), then its lock: one booking at a time.
  const draft = draftFromEvent(event);
  const moneyKey = moneyLockKey(ctx.actor.tenantId, event.provider, draft.externalId);
  if (moneyKey !== input.lockedMoneyKey) await lockKey(ctx.trx, moneyKey);
  // A refund's payment (its invoice and supplier), or RetryLaterError while that is still pending.
  const refunded = await findRefundedPayment(ctx, event, input);
  // Tenant: its country (tax rates) and currency (the ledger's).
  const tenant = input.tenant ?? (await tenantLedger(ctx));

  // Supplier and invoice; duplicate when the unique index refuses the invoice.
  const booked = await createSupplierAndInvoice(ctx, { event, draft, settings, refunded, country: tenant.country });
  if ('duplicateOf' in booked) return duplicateMovement(event, draft, booked.duplicateOf);
  // Outbound webhooks: a payment is booked as a paid incoming invoice with its payment (its
  // incoming_invoice.created was written with the insert); a refund books no payment.
  if (event.kind === 'payment') await emitPaymentEvents(ctx, booked.invoice.id, 'bezahlt', { invoiceId: booked.invoice.id });

  // Auto-post.
  const posted = await autoPost(ctx, {
    event,
    draft,
    settings,
    ledgerCurrency: tenant.currency ?? 'EUR',
    supplier: booked.supplier,
    invoice: booked.invoice,
    relatedInvoiceId: refunded.invoiceId,
  });
  return createdMovement(event, draft, booked.supplier, booked.invoice, refunded, posted);
}

/** A movement whose invoice was created, with its posting's outcome (also for bookPlainPayments). */
export function createdMovement(
  event: NormalizedEvent,
  draft: IncomingInvoiceDraft,
  supplier: SupplierResolution,
  invoice: BookedInvoice,
  refunded: RefundedPayment,
  posted: AutoPostOutcome,
): MovementOutcome {
  return {
    outcome: 'created',
    invoiceId: invoice.id,
    entry: posted.entry,
    warning: posted.warning,
    steps: [
      supplierStep(event, supplier),
      invoiceStep(event, draft, invoice, refunded),
      step('duplicate', 'unique', `no earlier incoming invoice with source ${event.provider} and externalId ${draft.externalId}`),
      posted.step,
    ],
  };
}

async function tenantLedger({ trx, actor }: CommandContext): Promise<TenantLedger> {
  const t = await Tenant.query(trx).findById(actor.tenantId).select('country', 'currency');
  return { country: t?.country ?? null, currency: t?.currency ?? null };
}

/**
 * Steps 3 (supplier) and 4 (invoice) together, because step 5 (duplicate) is decided by the
 * invoice insert: the unique index skips an existing (source, externalId) and reports it, which
 * saves the common case (a new movement) a read. A matched supplier wrote nothing before that
 * insert, and a refused insert writes nothing and keeps the transaction usable: no savepoint (two
 * round trips saved). An auto-created supplier shares a savepoint with the invoice, so a refused
 * invoice takes the supplier with it.
 */
async function createSupplierAndInvoice(
  ctx: CommandContext,
  a: { event: NormalizedEvent; draft: IncomingInvoiceDraft; settings: ConnectorSettings; refunded: RefundedPayment; country: string | null },
): Promise<{ supplier: SupplierResolution; invoice: BookedInvoice } | { duplicateOf: string | null }> {
  const { trx, actor } = ctx;
  const { event, draft } = a;
  const counterparty = event.counterparty ?? {};
  const invoiceFor = (t: Knex.Transaction, supplierId: string) =>
    createIncomingInvoiceFromEvent(t, { tenantId: actor.tenantId, event, draft, supplierId, relatedInvoiceId: a.refunded.invoiceId, country: a.country });
  try {
    // A refund belongs to the payment's supplier, whatever the refund event names.
    const known = a.refunded.supplier ?? (await findSupplier(trx, actor.tenantId, event.provider, counterparty, a.settings.defaultSupplierId));
    if (known) return { supplier: known, invoice: await invoiceFor(trx, known.supplierId) };
    // Events after this one in the transaction look for suppliers anew: this one may create one.
    forgetPrefetchedSuppliers(trx);
    return await trx.transaction(async (sp) => {
      const supplier = await createSupplierFor(sp, actor.tenantId, event.provider, counterparty);
      return { supplier, invoice: await invoiceFor(sp, supplier.supplierId) };
    });
  } catch (err) {
    if (!(err instanceof DuplicateInvoiceError)) throw err;
    const winner = await Invoice.query(trx).where({ tenantId: actor.tenantId, source: event.provider, externalId: draft.externalId }).select('id').first();
    return { duplicateOf: winner?.id ?? null };
  }
}

export function duplicateMovement(event: NormalizedEvent, draft: IncomingInvoiceDraft, invoiceId: string | null): MovementOutcome {
  return {
    outcome: 'duplicate',
    invoiceId,
    entry: null,
    warning: null,
    steps: [
      step('supplier', 'skipped', 'duplicate: nothing is created'),
      step('invoice', 'skipped', 'duplicate: nothing is created'),
      step(
        'duplicate',
        'duplicate',
        `an incoming invoice with source ${event.provider} and externalId ${draft.externalId} exists (${invoiceId}); nothing created`,
      ),
      step('autoPost', 'skipped', 'duplicate: nothing to post'),
    ],
  };
}

/**
 * Failure, expiry and ignored events book nothing. A redelivery of one is still a duplicate: under
 * an advisory lock on the provider's event id, an earlier processed log row of it (another row
 * than this one) makes this one duplicate. Related movements are never such events.
 */
async function bookNothing(
  { trx, actor }: CommandContext,
  input: MovementInput,
  isMain: boolean,
  recordedRefs: { externalId: string; refs: string[] } | null,
): Promise<MovementOutcome> {
  const { event } = input;
  const what = event.kind === 'failure' ? `${event.eventType} is a failed or expired payment` : `${event.eventType} is not booked by this connector`;
  const refsNote = recordedRefs ? `; references ${recordedRefs.refs.join(', ')} of ${recordedRefs.externalId} recorded for its refunds` : '';
  const steps = [step('supplier', 'skipped', `${what}: no supplier needed`), step('invoice', 'skipped', `${what}: nothing is created${refsNote}`)];
  const nothing = { invoiceId: null, entry: null, warning: null };
  if (isMain) {
    await lockKey(trx, eventLockKey(actor.tenantId, event.provider, event.eventId));
    // Events booked before this one in the transaction (a batch) count as finished here.
    await flushOutcomes(trx);
    const earlier = await WebhookEvent.query(trx)
      .where({ tenantId: actor.tenantId, provider: event.provider, externalId: event.eventId, status: 'processed' })
      .modify((q) => (input.eventRowId ? q.whereNot({ id: input.eventRowId }) : q))
      .select('id')
      .limit(1)
      .first();
    if (earlier) {
      steps.push(step('duplicate', 'duplicate', `event ${event.eventId} was processed before (log entry ${earlier.id})`));
      steps.push(step('autoPost', 'skipped', 'nothing to post'));
      return { ...nothing, outcome: 'duplicate', steps };
    }
  }
  steps.push(step('duplicate', 'unique', `event ${event.eventId} not seen before`));
  steps.push(step('autoPost', 'skipped', 'nothing to post'));
  return { ...nothing, outcome: 'nothing', steps };
}

const SUPPLIER_HOW: Record<SupplierResolution['how'], (event: NormalizedEvent) => string> = {
  original: () => 'the supplier of the refunded payment',
  default: () => 'default supplier from the connector settings',
  merchantId: (e) => `matched by ${e.provider} merchant id ${e.counterparty?.merchantId}`,
  email: (e) => `matched by e-mail ${e.counterparty?.email}`,
  created: () => 'auto-created from the event’s counterparty',
  placeholder: () => 'the event names no counterparty: placeholder supplier',
};

function supplierStep(event: NormalizedEvent, supplier: SupplierResolution): StepResult {
  const result = supplier.how === 'created' || supplier.how === 'placeholder' ? 'created' : 'matched';
  return step('supplier', result, `${supplier.name} (${supplier.supplierId}): ${SUPPLIER_HOW[supplier.how](event)}`);
}

function invoiceStep(event: NormalizedEvent, draft: IncomingInvoiceDraft, invoice: BookedInvoice, refunded: RefundedPayment): StepResult {
  const link =
    event.kind === 'refund' ? (refunded.invoiceId ? `, refund of invoice ${refunded.invoiceId}` : `, ${refunded.note || 'original (unknown) not found'}`) : '';
  return step(
    'invoice',
    'created',
    `eingangsrechnung ${draft.externalId} over ${invoice.totalGross} ${draft.currency} dated ${draft.invoiceDate}, status bezahlt${link} (${invoice.id})`,
  );
}
