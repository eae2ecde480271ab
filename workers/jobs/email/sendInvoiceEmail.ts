import { UnrecoverableError, type Job } from 'bullmq';
import { db } from '../../../shared/db';
import { config } from '../../../shared/config';
import { systemActor } from '../../../shared/actor';
import { smtpTransport, isTemporarySmtpFailure } from '../../../shared/providers/mail/smtpTransport';
import { EInvoiceExportError } from '../../../shared/formats/cii/einvoiceModel';
import { AppError } from '../../../shared/errors';
import { logger } from '../../../shared/logger';
import { loadDelivery } from '../../../shared/queries/emailDeliveries';
import {
  claimEmailDelivery,
  failInterruptedEmailDelivery,
  markEmailFailed,
  markEmailSent,
  noteEmailDeliveryError,
  releaseEmailDelivery,
} from '../../../shared/commands/emailDelivery';
import type { CommandContext } from '../../../shared/commands/types';
import type { AcceptedMail, SendInvoiceEmailPayload } from '../../../shared/jobs/catalog';
import { prepareAttachments, type PreparedMail } from './attachments';

/**
 * Send one invoice e-mail delivery, never twice: the row is claimed (queued → sending) right
 * before the SMTP transfer; a retry finding it 'sending' (worker died mid-transfer) fails it as
 * outcome unknown. SMTP 4xx/network errors requeue with backoff, 5xx fail. Once the server
 * accepted the message, a failed record is retried from job data (data.accepted), not re-sent.
 * The transitions are commands (shared/commands/emailDelivery.ts), each committed on its own: the
 * SMTP transfer runs between the claim and the outcome, outside any transaction.
 */
export async function sendInvoiceEmailJob(job: Job<SendInvoiceEmailPayload>) {
  const { deliveryId, tenantId, accepted: acceptedEarlier } = job.data;
  const actor = systemActor(tenantId);
  const run = <T>(command: (ctx: CommandContext) => Promise<T>) => db().transaction((trx) => command({ trx, actor }));

  if (acceptedEarlier) {
    // The server has the message already: only the record is missing.
    await run((ctx) => markEmailSent(ctx, deliveryId, acceptedEarlier));
    return { status: 'sent', messageId: acceptedEarlier.messageId, recordedLate: true };
  }
  const delivery = await loadDelivery(db(), tenantId, deliveryId);
  if (!delivery) throw new UnrecoverableError(`Delivery ${deliveryId} does not exist`);
  if (delivery.status === 'sent' || delivery.status === 'failed') return { status: delivery.status, skipped: true };
  if (delivery.status === 'sending') {
    await run((ctx) => failInterruptedEmailDelivery(ctx, deliveryId));
    return { status: 'failed', reason: 'unknown-outcome' };
  }

  const smtpUrl = config().smtp.url;
  if (!smtpUrl) {
    await run((ctx) => markEmailFailed(ctx, deliveryId, 'E-mail is not configured on this server (SMTP_URL is not set)'));
    throw new UnrecoverableError('SMTP_URL is not set');
  }

  // Attachments first: a crash while rendering must not leave the delivery half-claimed.
  let prepared: PreparedMail;
  try {
    prepared = await prepareAttachments(tenantId, delivery);
  } catch (err) {
    const reason = `The invoice could not be rendered for sending: ${(err as Error).message}`.slice(0, 1000);
    if (isPermanentRenderError(err) || isLastAttempt(job)) {
      // No SMTP conversation took place, so there is no SMTP answer to record.
      await run((ctx) => markEmailFailed(ctx, deliveryId, reason, null));
      throw new UnrecoverableError(reason);
    }
    // Maybe transient (database, memory): stays queued for the retry, the reason visible meanwhile.
    await run((ctx) => noteEmailDeliveryError(ctx, deliveryId, reason));
    throw err;
  }
  const { attachments, replyTo, notice } = prepared;

  if (!(await run((ctx) => claimEmailDelivery(ctx, deliveryId)))) return { status: 'skipped', reason: 'claimed-elsewhere' };

  const from = config().smtp.from;
  const domain = /@([^>\s]+)/.exec(from)?.[1] ?? 'localhost';
  let info: { response?: string; messageId: string };
  try {
    info = await smtpTransport(smtpUrl).sendMail({
      from,
      replyTo,
      to: delivery.to,
      subject: delivery.subject,
      text: delivery.message,
      attachments,
      // Deterministic Message-ID: the delivery's identity, visible to the recipient's systems.
      messageId: `<delivery-${deliveryId}@${domain}>`,
      headers: { 'X-Invoice-Id': delivery.invoiceId, 'X-Delivery-Id': deliveryId },
    });
  } catch (err) {
    // Only the SMTP conversation's errors are judged here: nothing was accepted.
    const message = String((err as { response?: string }).response ?? (err as Error).message).slice(0, 1000);
    if (isTemporarySmtpFailure(err) && !isLastAttempt(job)) {
      // Give the row back so the retry can claim it again.
      await run((ctx) => releaseEmailDelivery(ctx, deliveryId, message));
      throw err;
    }
    await run((ctx) => markEmailFailed(ctx, deliveryId, message));
    throw new UnrecoverableError(message);
  }

  // Accepted by the server: from here the delivery can only end 'sent'. A database failure while
  // recording it must not put the row back to queued, or the retry would send the e-mail twice.
  const accepted: AcceptedMail = { smtpResponse: String(info.response ?? '').slice(0, 1000), messageId: info.messageId, notice };
  try {
    await run((ctx) => markEmailSent(ctx, deliveryId, accepted));
  } catch (err) {
    // The job (in Redis) keeps what the server answered; the retry records it and sends nothing.
    await job.updateData({ ...job.data, accepted });
    logger.warn({ deliveryId, err: (err as Error).message }, 'e-mail accepted by the SMTP server but not recorded yet; the retry records it');
    throw err;
  }
  return { status: 'sent', messageId: info.messageId };
}

const isLastAttempt = (job: Job) => job.attemptsMade + 1 >= (job.opts.attempts ?? 1);

/**
 * Rendering errors no retry can fix: the invoice is gone or refused by a domain rule (AppError),
 * or an e-invoice rule blocks the document. Anything else may be transient and is retried.
 */
function isPermanentRenderError(err: unknown): boolean {
  return err instanceof AppError || err instanceof EInvoiceExportError;
}
