import { jobs, type AcceptedMail } from '../jobs/catalog';
import { enqueueAfterCommit } from '../outbox';
import type { DeliveryStatus } from '../queries/emailDeliveries';
import type { CommandContext } from './types';
import type { EmailFormatChoice } from '../domain/einvoiceFormats';

/**
 * An invoice e-mail delivery's life: queued by the send command, then moved by its job
 * (workers/jobs/email/sendInvoiceEmail.ts):
 *
 *   (send) ──queue──▶ queued ──claim──▶ sending ──sent──▶ sent
 *     ▲                  │
 *     └─────release──────┘        (temporary SMTP failure: the retry claims it again)
 *   queued | sending ──failed──▶ failed          (never a sent one)
 *   sending, found so by a later run ──▶ failed   (the outcome is unknown: not sent twice)
 *
 * The job commits each transition in its own transaction and talks to the SMTP server between
 * the claim and the outcome, outside any transaction. Every command names the states it may
 * leave, so a late or second run of the job never undoes a final state. docs/documents-and-email.md,
 * "Never twice".
 */

const UNKNOWN_OUTCOME =
  'Delivery outcome unknown: the worker stopped during the SMTP transfer. Not sent again to avoid a duplicate; check with the recipient or send again.';

const deliveryIn = ({ trx, actor }: CommandContext, deliveryId: string, from: DeliveryStatus[]) =>
  trx('deliveries').where({ id: deliveryId, tenantId: actor.tenantId }).whereIn('status', from);

export interface NewEmailDelivery {
  invoiceId: string;
  to: string;
  subject: string;
  message: string;
  /** What the job attaches, stored so that every retry attaches the same (docs/e-invoicing.md). */
  attachment: EmailFormatChoice;
  /** A dunning notice's e-mail: its PDF is the attachment (docs/dunning.md). */
  dunningNoticeId?: string;
}

/** A new queued delivery and its job, which the outbox adds only if the caller's transaction commits. */
export async function queueEmailDelivery({ trx, actor }: CommandContext, d: NewEmailDelivery): Promise<{ deliveryId: string }> {
  const [delivery] = await trx('deliveries')
    .insert({
      tenantId: actor.tenantId,
      invoiceId: d.invoiceId,
      channel: 'email',
      to: d.to,
      subject: d.subject,
      message: d.message,
      format: d.attachment.format,
      formatSource: d.attachment.source,
      status: 'queued',
      dunningNoticeId: d.dunningNoticeId ?? null,
      createdBy: actor.userId,
    })
    .returning('id');
  // Job id email-<deliveryId> (shared/jobs/catalog.ts): a business key, re-adding it is a no-op.
  await enqueueAfterCommit(trx, jobs.sendInvoiceEmail, { deliveryId: delivery.id, tenantId: actor.tenantId });
  return { deliveryId: delivery.id };
}

/** queued → sending, right before the SMTP transfer; false when another run claimed it first. */
export async function claimEmailDelivery(ctx: CommandContext, deliveryId: string): Promise<boolean> {
  const claimed = await deliveryIn(ctx, deliveryId, ['queued']).update({
    status: 'sending',
    attempts: ctx.trx.raw('attempts + 1'),
    updatedAt: ctx.trx.fn.now(),
  });
  return claimed > 0;
}

/** sending → queued after a temporary SMTP failure, with the server's answer, for the retry to claim. */
export async function releaseEmailDelivery(ctx: CommandContext, deliveryId: string, smtpAnswer: string): Promise<void> {
  await deliveryIn(ctx, deliveryId, ['sending']).update({ status: 'queued', error: smtpAnswer, smtpResponse: smtpAnswer, updatedAt: ctx.trx.fn.now() });
}

/**
 * sending (or queued) → sent, with the server's answer. `accepted.notice` becomes the sent
 * delivery's error: a warning that what was sent differs from what was asked for.
 */
export async function markEmailSent(ctx: CommandContext, deliveryId: string, accepted: AcceptedMail): Promise<void> {
  await deliveryIn(ctx, deliveryId, ['sending', 'queued']).update({
    status: 'sent',
    smtpResponse: accepted.smtpResponse,
    messageId: accepted.messageId,
    sentAt: ctx.trx.fn.now(),
    error: accepted.notice,
    updatedAt: ctx.trx.fn.now(),
  });
}

/**
 * Any state but sent → failed: a delivery that went out is never failed. `smtpResponse` is null
 * when no SMTP conversation took place (the attachment could not be rendered).
 */
export async function markEmailFailed(ctx: CommandContext, deliveryId: string, error: string, smtpResponse: string | null = error): Promise<void> {
  await ctx
    .trx('deliveries')
    .where({ id: deliveryId, tenantId: ctx.actor.tenantId })
    .whereNot({ status: 'sent' })
    .update({ status: 'failed', error, smtpResponse, updatedAt: ctx.trx.fn.now() });
}

/** sending → failed, outcome unknown: the run that claimed it stopped during the transfer. */
export async function failInterruptedEmailDelivery(ctx: CommandContext, deliveryId: string): Promise<void> {
  await deliveryIn(ctx, deliveryId, ['sending']).update({ status: 'failed', error: UNKNOWN_OUTCOME, updatedAt: ctx.trx.fn.now() });
}

/** Stays queued for the retry, with the reason it did not go out this time visible meanwhile. */
export async function noteEmailDeliveryError(ctx: CommandContext, deliveryId: string, reason: string): Promise<void> {
  await deliveryIn(ctx, deliveryId, ['queued']).update({ error: reason, updatedAt: ctx.trx.fn.now() });
}
