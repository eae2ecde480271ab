import { UnrecoverableError, type Job } from 'bullmq';
import { db } from '../../../shared/db';
import { config } from '../../../shared/config';
import { artifactStore } from '../../../shared/documents/artifactStore';
import { renderDocument } from '../../../shared/documents/renderDocument';
import { CONTENT_TYPES, documentFileName, type DocumentKind } from '../../../shared/documents/kinds';
import { loadDocumentInput } from '../../../shared/queries/invoices';
import { smtpTransport, isTemporarySmtpFailure } from '../../../shared/providers/mail/smtpTransport';
import { EInvoiceExportError } from '../../../shared/formats/cii/einvoiceModel';
import { AppError, notFound } from '../../../shared/errors';
import { logger } from '../../../shared/logger';
import type { AcceptedMail, SendInvoiceEmailPayload } from '../../../shared/jobs/catalog';

const UNKNOWN_OUTCOME =
  'Delivery outcome unknown: the worker stopped during the SMTP transfer. Not sent again to avoid a duplicate; check with the recipient or send again.';

/**
 * Send one invoice e-mail delivery, never twice: the row is claimed (queued → sending) right
 * before the SMTP transfer; a retry finding it 'sending' (worker died mid-transfer) fails it as
 * outcome unknown. SMTP 4xx/network errors requeue with backoff, 5xx fail. Once the server
 * accepted the message, a failed record is retried from job data (data.accepted), not re-sent.
 */
export async function sendInvoiceEmailJob(job: Job<SendInvoiceEmailPayload>) {
  const { deliveryId, tenantId } = job.data;
  if (job.data.accepted) {
    // The server has the message already: only the record is missing.
    await recordSent(deliveryId, tenantId, job.data.accepted);
    return { status: 'sent', messageId: job.data.accepted.messageId, recordedLate: true };
  }
  const delivery = await db()('deliveries').where({ id: deliveryId, tenantId }).first();
  if (!delivery) throw new UnrecoverableError(`Delivery ${deliveryId} does not exist`);
  if (delivery.status === 'sent' || delivery.status === 'failed') return { status: delivery.status, skipped: true };
  if (delivery.status === 'sending') {
    await db()('deliveries')
      .where({ id: deliveryId, tenantId, status: 'sending' })
      .update({ status: 'failed', error: UNKNOWN_OUTCOME, updatedAt: db().fn.now() });
    return { status: 'failed', reason: 'unknown-outcome' };
  }

  const smtpUrl = config().smtp.url;
  if (!smtpUrl) {
    await markFailed(deliveryId, tenantId, 'E-mail is not configured on this server (SMTP_URL is not set)');
    throw new UnrecoverableError('SMTP_URL is not set');
  }

  // Attachments first: a crash while rendering must not leave the delivery half-claimed.
  let prepared: PreparedMail;
  try {
    prepared = await prepareAttachments(tenantId, delivery.invoiceId);
  } catch (err) {
    const reason = `The invoice could not be rendered for sending: ${(err as Error).message}`.slice(0, 1000);
    if (isPermanentRenderError(err) || isLastAttempt(job)) {
      // No SMTP conversation took place, so there is no SMTP answer to record.
      await markFailed(deliveryId, tenantId, reason, null);
      throw new UnrecoverableError(reason);
    }
    // Maybe transient (database, memory): stays queued for the retry, the reason visible meanwhile.
    await db()('deliveries').where({ id: deliveryId, tenantId, status: 'queued' }).update({ error: reason, updatedAt: db().fn.now() });
    throw err;
  }
  const { attachments, replyTo, notice } = prepared;

  const claimed = await db()('deliveries')
    .where({ id: deliveryId, tenantId, status: 'queued' })
    .update({ status: 'sending', attempts: db().raw('attempts + 1'), updatedAt: db().fn.now() });
  if (!claimed) return { status: 'skipped', reason: 'claimed-elsewhere' };

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
      await db()('deliveries')
        .where({ id: deliveryId, tenantId, status: 'sending' })
        .update({ status: 'queued', error: message, smtpResponse: message, updatedAt: db().fn.now() });
      throw err;
    }
    await markFailed(deliveryId, tenantId, message);
    throw new UnrecoverableError(message);
  }

  // Accepted by the server: from here the delivery can only end 'sent'. A database failure while
  // recording it must not put the row back to queued, or the retry would send the e-mail twice.
  const accepted: AcceptedMail = { smtpResponse: String(info.response ?? '').slice(0, 1000), messageId: info.messageId, notice };
  try {
    await recordSent(deliveryId, tenantId, accepted);
  } catch (err) {
    // The job (in Redis) keeps what the server answered; the retry records it and sends nothing.
    await job.updateData({ ...job.data, accepted });
    logger.warn({ deliveryId, err: (err as Error).message }, 'e-mail accepted by the SMTP server but not recorded yet; the retry records it');
    throw err;
  }
  return { status: 'sent', messageId: info.messageId };
}

/** sending → sent, with the server's answer. A sent delivery's error is a warning: what was sent differs from what was asked for. */
async function recordSent(deliveryId: string, tenantId: string, accepted: AcceptedMail): Promise<void> {
  await db()('deliveries').where({ id: deliveryId, tenantId }).whereIn('status', ['sending', 'queued']).update({
    status: 'sent',
    smtpResponse: accepted.smtpResponse,
    messageId: accepted.messageId,
    sentAt: db().fn.now(),
    error: accepted.notice,
    updatedAt: db().fn.now(),
  });
}

const isLastAttempt = (job: Job) => job.attemptsMade + 1 >= (job.opts.attempts ?? 1);

/**
 * Rendering errors no retry can fix: the invoice is gone or refused by a domain rule (AppError),
 * or an e-invoice rule blocks the document. Anything else may be transient and is retried.
 */
function isPermanentRenderError(err: unknown): boolean {
  return err instanceof AppError || err instanceof EInvoiceExportError;
}

interface PreparedMail {
  attachments: Array<{ filename: string; content: Buffer; contentType: string }>;
  replyTo: string | undefined;
  /** Set when the attachment differs from the tenant's choice (ZUGFeRD impossible → plain PDF). */
  notice: string | null;
}

/**
 * The attachment for the invoice as it is now: content, version and settings from one
 * repeatable-read snapshot, or an edit in between would cache old content under the new version.
 * With zugferdByDefault a ZUGFeRD file replaces the plain PDF (it is a complete PDF); when the
 * invoice cannot be an e-invoice (e.g. BR-S-02) the plain PDF goes out with a notice.
 */
async function prepareAttachments(tenantId: string, invoiceId: string): Promise<PreparedMail> {
  const { input, version, tenant } = await db().transaction(async (trx) => {
    await trx.raw('set transaction isolation level repeatable read, read only');
    const row = await trx('invoices').where({ tenantId, id: invoiceId }).whereNull('deletedAt').first('version');
    if (!row) throw notFound('Invoice');
    return {
      version: row.version as number,
      input: await loadDocumentInput(trx, tenantId, invoiceId),
      tenant: await trx('tenants').where({ id: tenantId }).first('settings', 'email'),
    };
  });

  const artifact = async (kind: DocumentKind) => {
    const key = { tenantId, invoiceId, kind, version };
    let content = await artifactStore.get(key);
    if (!content) {
      content = await renderDocument(kind, input);
      await artifactStore.put(key, content, CONTENT_TYPES[kind]);
    }
    return { filename: documentFileName(kind, input.invoice), content, contentType: CONTENT_TYPES[kind] };
  };

  let notice: string | null = null;
  let attachment: PreparedMail['attachments'][number] | null = null;
  const einvoiceable = ['rechnung', 'gutschrift'].includes(input.invoice.type) && input.invoice.status !== 'entwurf';
  if (tenant?.settings?.zugferdByDefault && einvoiceable) {
    try {
      attachment = await artifact('zugferd');
    } catch (err) {
      if (!(err instanceof EInvoiceExportError)) throw err;
      notice = `Sent as plain PDF: ZUGFeRD not possible: ${err.message}`.slice(0, 1000);
      logger.warn({ tenantId, invoiceId, reason: err.message }, 'ZUGFeRD export impossible; e-mailing the plain PDF');
    }
  }
  attachment ??= await artifact('pdf');
  return { attachments: [attachment], replyTo: tenant?.email ?? undefined, notice };
}

/** Never overwrites a sent delivery: failing is only for rows that did not go out. */
async function markFailed(deliveryId: string, tenantId: string, error: string, smtpResponse: string | null = error) {
  await db()('deliveries')
    .where({ id: deliveryId, tenantId })
    .whereNot({ status: 'sent' })
    .update({ status: 'failed', error, smtpResponse, updatedAt: db().fn.now() });
}
