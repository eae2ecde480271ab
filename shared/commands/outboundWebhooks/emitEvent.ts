import type { Knex } from 'knex';
import type { WebhookEventType } from '../../domain/outboundWebhooks';
import { enqueueAfterCommit, OUTBOX_CHANNEL } from '../../outbox';
import { config } from '../../config';
import { jobs } from '../../jobs/catalog';
import { activeSubscriptions } from '../../queries/webhookSubscriptions';
import { loadInvoiceView, paymentView } from '../../queries/invoices';

/**
 * Emit an outbound webhook event in the transaction of the change it reports
 * (docs/outbound-webhooks.md): the event, one delivery per active subscription that names its
 * type, and one delivery job per delivery in the outbox. A rollback takes all of it back; a commit
 * loses none of it. `object` is the API's representation of the resource, or a function that
 * reads it in this transaction: read only when someone subscribed, so a tenant without
 * subscriptions pays one indexed lookup per event.
 */
export async function emitEvent(
  ctx: { trx: Knex.Transaction; actor: { tenantId: string } },
  type: WebhookEventType,
  object: unknown | (() => Promise<unknown>),
): Promise<void> {
  const { trx } = ctx;
  const tenantId = ctx.actor.tenantId;
  const subscriptionIds = (await subscriptionsIn(trx, tenantId)).filter((s) => s.events.includes(type)).map((s) => s.id);
  if (!subscriptionIds.length) return;
  const value = typeof object === 'function' ? await (object as () => Promise<unknown>)() : object;
  await writeEvent(trx, tenantId, type, value, subscriptionIds);
}

const subscriptionsByTrx = new WeakMap<Knex.Transaction, Map<string, Promise<{ id: string; events: string[] }[]>>>();

/**
 * The tenant's active subscriptions, read once per transaction: a command that emits several
 * events (a booked payment: the invoice, paid, the payment) pays one lookup, not one per event.
 */
function subscriptionsIn(trx: Knex.Transaction, tenantId: string) {
  const byTenant = subscriptionsByTrx.get(trx) ?? new Map<string, Promise<{ id: string; events: string[] }[]>>();
  subscriptionsByTrx.set(trx, byTenant);
  const found = byTenant.get(tenantId) ?? activeSubscriptions(trx, tenantId);
  byTenant.set(tenantId, found);
  return found;
}

/** The event row, its deliveries and their jobs (also the ping's, to one subscription). */
export async function writeEvent(
  trx: Knex.Transaction,
  tenantId: string,
  type: string,
  object: unknown,
  subscriptionIds: string[],
  redeliveryOf: string | null = null,
): Promise<{ eventId: string; deliveryIds: string[] }> {
  const [event] = await trx('outboundEvents')
    .insert({ tenantId, type, object: JSON.stringify(object) })
    .returning('id');
  return { eventId: event.id, deliveryIds: await writeDeliveries(trx, tenantId, event.id, subscriptionIds, redeliveryOf) };
}

export async function writeDeliveries(
  trx: Knex.Transaction,
  tenantId: string,
  eventId: string,
  subscriptionIds: string[],
  redeliveryOf: string | null = null,
): Promise<string[]> {
  const rows: { id: string }[] = await trx('webhookDeliveries')
    .insert(subscriptionIds.map((subscriptionId) => ({ tenantId, subscriptionId, eventId, redeliveryOf })))
    .returning('id');
  for (const r of rows) await enqueueAfterCommit(trx, jobs.deliverWebhook, { tenantId, deliveryId: r.id });
  // Jobs and the payment pipeline commit without runInTransaction's relay after commit: the
  // notification (delivered on commit only) wakes the workers' relays instead of the 10 s relay
  // job. Under runInTransaction both may add the job; its id makes that one job.
  await trx.raw('select pg_notify(?, ?)', [OUTBOX_CHANNEL, config().redisPrefix]);
  return rows.map((r) => r.id);
}

/**
 * A payment booked on an invoice: invoice.paid or invoice.partially_paid (by the invoice's new
 * status) and payment.recorded, from both places that book payments (recordPayment, and the
 * payment pipeline's bookPaymentEvent).
 */
export async function emitPaymentEvents(
  ctx: { trx: Knex.Transaction; actor: { tenantId: string } },
  invoiceId: string,
  status: string,
  payment: { id: string } | { invoiceId: string },
): Promise<void> {
  const { trx } = ctx;
  const tenantId = ctx.actor.tenantId;
  if (status === 'bezahlt' || status === 'teilbezahlt') {
    await emitEvent(ctx, status === 'bezahlt' ? 'invoice.paid' : 'invoice.partially_paid', () => loadInvoiceView(trx, tenantId, invoiceId));
  }
  await emitEvent(ctx, 'payment.recorded', async () => {
    const row = await trx('payments')
      .where({ tenantId, ...payment })
      .orderBy('createdAt', 'desc')
      .first('id', 'invoiceId', 'amount', 'date', 'method', 'createdAt');
    // The payment as POST /api/invoices/:id/payments answers it, with the invoice it belongs to.
    return { ...paymentView(row), invoiceId: row.invoiceId };
  });
}
