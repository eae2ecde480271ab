import type { Knex } from 'knex';
import type { NormalizedEvent } from '../providers/payments/types';
import type { ConnectorSettings } from '../domain/connectorSettings';
import { createIncomingInvoiceFromEvent, draftFromEvent, DuplicateInvoiceError } from '../commands/webhooks/createIncomingInvoiceFromEvent';
import { postIncomingInvoice, postRefund, PostingError, type PostedEntry } from '../ledger/posting';
import { eventLockKey, lockKey, moneyLockKey } from '../locks';
import { createSupplierFor, findSupplier, type SupplierResolution } from './resolveSupplier';

/**
 * The provider-agnostic part of the webhook pipeline (docs/webhooks.md, "The pipeline job", steps
 * 3–6) on a verified NormalizedEvent, in the caller's transaction: the worker job commits it,
 * test-webhook runs the same code and rolls back. Exactly once: an advisory lock per money movement,
 * under which an existing invoice means duplicate before anything is created; the unique index
 * invoices_external_unique stays the final guard (a refused insert is a duplicate too).
 */
export type StepName = 'signature' | 'tenant' | 'supplier' | 'invoice' | 'duplicate' | 'autoPost';

export interface StepResult {
  step: StepName;
  result: string;
  detail: string;
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
  /** The tenant's country and ledger currency when the caller read them already (the job does, with the row lock). */
  tenant?: { country: string | null; currency: string | null };
  /** The money lock (moneyLockKey) the caller took already in this transaction (the job does, in its first read). */
  lockedMoneyKey?: string | null;
  /** External ids of the movements this event booked before its main one, in this transaction (runPipeline). */
  bookedAlongside?: string[];
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
  // The movements just booked in this transaction need no waiting for: a Mollie refund.created
  // carries its payment among them, so another pending delivery of that payment is no reason to
  // retry later (the payment is booked here, and that delivery will end duplicate).
  const bookedAlongside = (event.related ?? []).map((r) => r.externalId).filter((x): x is string => !!x);
  const main = await processMovement(trx, { ...input, bookedAlongside }, true);
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

  // Before anything else, and also for duplicates and non-booking events: recording a reference
  // twice is a no-op, and a later refund may need it whatever became of this event.
  const recordedRefs = await recordPaymentRefs(trx, tenantId, event);

  if (event.kind !== 'payment' && event.kind !== 'refund') {
    // Failure, expiry and ignored events book nothing; a redelivery of one is still a duplicate.
    const what = event.kind === 'failure' ? `${event.eventType} is a failed or expired payment` : `${event.eventType} is not booked by this connector`;
    const refsNote = recordedRefs ? `; references ${recordedRefs.refs.join(', ')} of ${recordedRefs.externalId} recorded for its refunds` : '';
    step('supplier', 'skipped', `${what}: no supplier needed`);
    step('invoice', 'skipped', `${what}: nothing is created${refsNote}`);
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
  const moneyKey = moneyLockKey(tenantId, event.provider, draft.externalId);
  if (moneyKey !== input.lockedMoneyKey) await lockKey(trx, moneyKey);
  // No read for an existing invoice first: the insert below skips an existing (source,
  // externalId) through the unique index and reports it (DuplicateInvoiceError), so the common
  // case (a new movement; re-deliveries mostly stop at ingest) saves a round trip.
  const duplicateOf = (invoiceId: string | null): MovementOutcome => {
    step('supplier', 'skipped', 'duplicate: nothing is created');
    step('invoice', 'skipped', 'duplicate: nothing is created');
    step(
      'duplicate',
      'duplicate',
      `an incoming invoice with source ${event.provider} and externalId ${draft.externalId} exists (${invoiceId}); nothing created`,
    );
    step('autoPost', 'skipped', 'duplicate: nothing to post');
    return { outcome: 'duplicate', invoiceId, entry: null, steps, warning: null };
  };

  let supplier: SupplierResolution;
  let invoice: { id: string; totalGross: string };
  let relatedInvoiceId: string | null = null;
  let originalSupplier: { supplierId: string; name: string } | null = null;
  let originalNote = '';
  if (event.kind === 'refund' && (event.originalExternalId || event.originalRefs?.length)) {
    const original = await findOriginal(trx, tenantId, event, input.eventRowId ?? null, input.bookedAlongside ?? []);
    relatedInvoiceId = original.invoice?.id ?? null;
    originalNote = original.note;
    if (original.invoice?.supplierId && !original.invoice.deletedAt)
      originalSupplier = { supplierId: original.invoice.supplierId, name: original.invoice.name };
  }
  const tenant = input.tenant ?? (await trx('tenants').where({ id: tenantId }).first('country', 'currency'));
  try {
    // A refund belongs to the payment's supplier, whatever the refund event names.
    const known: SupplierResolution | null = originalSupplier
      ? { ...originalSupplier, how: 'original' }
      : await findSupplier(trx, tenantId, event.provider, event.counterparty ?? {}, settings.defaultSupplierId);
    if (known) {
      // Nothing written yet, and a refused invoice insert (ON CONFLICT DO NOTHING) writes nothing
      // and does not abort the transaction: no savepoint needed (two round trips saved).
      supplier = known;
      invoice = await createIncomingInvoiceFromEvent(trx, { tenantId, event, draft, supplierId: known.supplierId, relatedInvoiceId, country: tenant?.country });
    } else {
      // A savepoint: if the unique index still refuses the invoice, the created supplier goes with it.
      [supplier, invoice] = await trx.transaction(async (sp) => {
        const s = await createSupplierFor(sp, tenantId, event.provider, event.counterparty ?? {});
        const inv = await createIncomingInvoiceFromEvent(sp, { tenantId, event, draft, supplierId: s.supplierId, relatedInvoiceId, country: tenant?.country });
        return [s, inv] as const;
      });
    }
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
  step(
    'supplier',
    supplier.how === 'created' || supplier.how === 'placeholder' ? 'created' : 'matched',
    `${supplier.name} (${supplier.supplierId}): ${how[supplier.how]}`,
  );
  const link =
    event.kind === 'refund' ? (relatedInvoiceId ? `, refund of invoice ${relatedInvoiceId}` : `, ${originalNote || 'original (unknown) not found'}`) : '';
  step(
    'invoice',
    'created',
    `eingangsrechnung ${draft.externalId} over ${invoice.totalGross} ${draft.currency} dated ${draft.invoiceDate}, status bezahlt${link} (${invoice.id})`,
  );
  step('duplicate', 'unique', `no earlier incoming invoice with source ${event.provider} and externalId ${draft.externalId}`);

  let entry: PostedEntry | null = null;
  let warning: string | null = null;
  const ledgerCurrency = tenant?.currency ?? 'EUR';
  if (!settings.autoPost) {
    step('autoPost', 'skipped', 'auto-post is off in the connector settings');
  } else if (draft.currency !== ledgerCurrency) {
    // The ledger is kept in the tenant's currency; converting needs the rate of the day, which the
    // event does not carry. Booked by hand instead of at a made-up rate.
    step('autoPost', 'skipped', `${draft.currency} differs from the ledger currency ${ledgerCurrency}: post it manually at the day's exchange rate`);
  } else {
    const description = `${PROVIDER_LABEL[event.provider]} ${draft.externalId} – ${supplier.name}`;
    const toPost = {
      id: invoice.id,
      tenantId,
      supplierId: supplier.supplierId,
      invoiceDate: draft.invoiceDate,
      totalGross: invoice.totalGross,
      invoiceNumber: draft.externalId,
      relatedInvoiceId,
    };
    try {
      // No savepoint: posting throws PostingError only before it writes anything (see posting.ts),
      // and any other error fails the whole job's transaction anyway.
      entry = await (event.kind === 'refund'
        ? postRefund(trx, toPost, event.provider, settings, description)
        : postIncomingInvoice(trx, toPost, event.provider, settings, description));
    } catch (err) {
      if (!(err instanceof PostingError)) throw err;
      // The invoice stands; only the posting waits for the settings to be fixed.
      warning = `auto-post failed: ${err.message}`;
      step('autoPost', 'failed', err.message);
    }
    if (entry) {
      const rev = entry.reversesEntryId ? `, reverses entry ${entry.reversesEntryId}` : '';
      step(
        'autoPost',
        'posted',
        `debit ${entry.debitAccount} / credit ${entry.creditAccount} ${entry.amount} ${draft.currency} (expense account from ${entry.expenseSource}${rev}; entry ${entry.entryId})`,
      );
    } else if (!warning) {
      step('autoPost', 'skipped', 'the invoice is already posted');
    }
  }
  return { outcome: 'created', invoiceId: invoice.id, entry, steps, warning };
}

/**
 * Records the other ids a payment is known by (NormalizedEvent.paymentRefs), so that a refund
 * naming only those (Stripe's charge.refunded on current API versions: pi_… / ch_…) finds the
 * payment's invoice. Keyed (tenant, provider, ref, externalId); an existing row is kept.
 */
async function recordPaymentRefs(trx: Knex.Transaction, tenantId: string, event: NormalizedEvent): Promise<{ externalId: string; refs: string[] } | null> {
  const pr = event.paymentRefs;
  if (!pr?.externalId || !Array.isArray(pr.refs)) return null;
  const refs = [...new Set(pr.refs.filter((r) => typeof r === 'string' && r && r !== pr.externalId))].slice(0, 20);
  if (!refs.length) return null;
  await trx('providerPaymentRefs')
    .insert(refs.map((ref) => ({ tenantId, provider: event.provider, ref, externalId: pr.externalId })))
    .onConflict(['tenantId', 'provider', 'ref', 'externalId'])
    .ignore();
  return { externalId: pr.externalId, refs };
}

interface OriginalLookup {
  invoice: { id: string; supplierId: string | null; name: string; deletedAt: Date | null } | null;
  /** Why there is no link, for the invoice step. */
  note: string;
}

/**
 * The refunded payment's invoice: by the externalId the refund names, else through the recorded
 * references of the ids it names (originalRefs; the named externalId too, which is how events
 * stored before references existed still link). A reference that points at more than one
 * payment links nothing: reversing the wrong entry is worse than an unlinked refund.
 */
async function findOriginal(
  trx: Knex.Transaction,
  tenantId: string,
  event: NormalizedEvent,
  eventRowId: string | null,
  bookedAlongside: readonly string[],
): Promise<OriginalLookup> {
  const direct = event.originalExternalId ?? null;
  const refs = [...new Set([...(event.originalRefs ?? []), ...(direct ? [direct] : [])])].filter((r) => typeof r === 'string' && r);

  // Ordering: the refund may overtake its payment, or the event that names the payment's other
  // ids (Stripe's invoice_payment.paid). Each "still pending?" question is asked BEFORE reading
  // what that event would write: an event's writes and its final status commit together, so in
  // this order we either see it pending (retry later) or see its writes — the other order could
  // miss both when it commits between the two reads.
  // Movements this event booked alongside (bookedAlongside) are not waited for.
  const awaited = (ids: string[]) => ids.filter((id) => !bookedAlongside.includes(id));
  const stillPending = async (ids: string[], byRefs: string[]) => {
    const moneyIds = awaited(ids);
    const refIds = awaited(byRefs);
    if (!eventRowId || (!moneyIds.length && !refIds.length)) return;
    const waiting = await trx('webhookEvents')
      .where({ tenantId, provider: event.provider, status: 'pending' })
      .whereNot({ id: eventRowId })
      .where((q) => {
        if (moneyIds.length) q.whereIn('moneyExternalId', moneyIds);
        if (refIds.length) q.orWhereRaw("(normalized -> 'paymentRefs' -> 'refs') \\?| ?::text[]", [refIds]);
      })
      .first('id');
    if (waiting) throw new RetryLaterError(`the original payment ${moneyIds[0] ?? refIds[0]} is still being processed (log entry ${waiting.id})`);
  };
  await stillPending(direct ? [direct] : [], refs);
  const refRows: { externalId: string }[] = refs.length
    ? await trx('providerPaymentRefs').where({ tenantId, provider: event.provider }).whereIn('ref', refs).select('externalId')
    : [];
  const mapped = [...new Set(refRows.map((r) => r.externalId))];
  // The payments the references led to may themselves still be pending.
  await stillPending(
    mapped.filter((id) => id !== direct),
    [],
  );
  const candidates = [...new Set([...(direct ? [direct] : []), ...mapped])];

  const rows = candidates.length
    ? await trx('invoices as i')
        .leftJoin('suppliers as s', 's.id', 'i.supplierId')
        .where({ 'i.tenantId': tenantId, 'i.source': event.provider })
        .whereIn('i.externalId', candidates)
        .select('i.id', 'i.externalId', 'i.supplierId', 's.name', 's.deletedAt')
    : [];
  const byExternalId = (id: string) => rows.find((r: { externalId: string }) => r.externalId === id) ?? null;
  if (direct && byExternalId(direct)) return { invoice: byExternalId(direct), note: '' };
  const viaRefs = mapped.filter((id) => id !== direct);
  if (viaRefs.length > 1) return { invoice: null, note: `original ambiguous (${refs.join(', ')} name ${viaRefs.join(', ')}): not linked` };
  const found = viaRefs.length === 1 ? byExternalId(viaRefs[0]) : null;
  if (found) return { invoice: found, note: '' };
  return { invoice: null, note: `original ${viaRefs[0] ?? direct ?? refs.join(' / ')} not found` };
}
