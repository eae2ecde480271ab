import { UnrecoverableError, type Job } from 'bullmq';
import { db } from '../../../shared/db';
import { config } from '../../../shared/config';
import { artifactStore } from '../../../shared/documents/artifactStore';
import { renderDocument } from '../../../shared/documents/renderDocument';
import { CONTENT_TYPES, documentFileName, type DocumentKind } from '../../../shared/documents/kinds';
import { loadDocumentInput } from '../../../shared/queries/invoices';
import { smtpTransport, isTemporarySmtpFailure } from '../../../shared/providers/mail/smtpTransport';

export interface SendInvoiceEmailData {
  deliveryId: string;
  tenantId: string;
}

const UNKNOWN_OUTCOME =
  'Delivery outcome unknown: the worker stopped during the SMTP transfer. Not sent again to avoid a duplicate; check with the recipient or send again.';

/**
 * Send one invoice e-mail delivery. Never twice: the delivery row is claimed (queued → sending)
 * right before the SMTP transfer, after the attachments are ready. A retry that finds the row
 * 'sent' does nothing; one that finds it still 'sending' (the worker died mid-transfer) marks it
 * failed with an explanation instead of risking a duplicate. Temporary SMTP failures (4xx,
 * network) put the row back to queued and retry with backoff; permanent ones (5xx) fail it.
 */
export async function sendInvoiceEmailJob(job: Job<SendInvoiceEmailData>) {
  const { deliveryId, tenantId } = job.data;
  const delivery = await db()('deliveries').where({ id: deliveryId, tenantId }).first();
  if (!delivery) throw new UnrecoverableError(`Delivery ${deliveryId} does not exist`);
  if (delivery.status === 'sent' || delivery.status === 'failed') return { status: delivery.status, skipped: true };
  if (delivery.status === 'sending') {
    await db()('deliveries').where({ id: deliveryId, tenantId, status: 'sending' }).update({ status: 'failed', error: UNKNOWN_OUTCOME, updatedAt: db().fn.now() });
    return { status: 'failed', reason: 'unknown-outcome' };
  }

  const smtpUrl = config().smtp.url;
  if (!smtpUrl) {
    await markFailed(deliveryId, tenantId, 'E-mail is not configured on this server (SMTP_URL is not set)');
    throw new UnrecoverableError('SMTP_URL is not set');
  }

  // Attachments first: a crash while rendering must not leave the delivery half-claimed.
  const input = await loadDocumentInput(db(), tenantId, delivery.invoiceId);
  const tenant = await db()('tenants').where({ id: tenantId }).first('settings', 'name', 'email');
  const kinds: DocumentKind[] = ['pdf'];
  const einvoiceable = ['rechnung', 'gutschrift'].includes(input.invoice.type) && input.invoice.status !== 'entwurf';
  if (tenant?.settings?.zugferdByDefault && einvoiceable) kinds[0] = 'zugferd';
  const version = (await db()('invoices').where({ id: delivery.invoiceId, tenantId }).first('version')).version as number;
  const attachments = [];
  for (const kind of kinds) {
    const key = { tenantId, invoiceId: delivery.invoiceId, kind, version };
    let content = await artifactStore.get(key);
    if (!content) {
      content = await renderDocument(kind, input);
      await artifactStore.put(key, content, CONTENT_TYPES[kind]);
    }
    attachments.push({ filename: documentFileName(kind, input.invoice), content, contentType: CONTENT_TYPES[kind] });
  }

  const claimed = await db()('deliveries')
    .where({ id: deliveryId, tenantId, status: 'queued' })
    .update({ status: 'sending', attempts: db().raw('attempts + 1'), updatedAt: db().fn.now() });
  if (!claimed) return { status: 'skipped', reason: 'claimed-elsewhere' };

  const from = config().smtp.from;
  const domain = /@([^>\s]+)/.exec(from)?.[1] ?? 'localhost';
  try {
    const info = await smtpTransport(smtpUrl).sendMail({
      from,
      replyTo: tenant?.email ?? undefined,
      to: delivery.to,
      subject: delivery.subject,
      text: delivery.message,
      attachments,
      // Deterministic Message-ID: the delivery's identity, visible to the recipient's systems.
      messageId: `<delivery-${deliveryId}@${domain}>`,
      headers: { 'X-Invoice-Id': delivery.invoiceId, 'X-Delivery-Id': deliveryId },
    });
    await db()('deliveries').where({ id: deliveryId, tenantId }).update({
      status: 'sent',
      smtpResponse: String(info.response ?? '').slice(0, 1000),
      messageId: info.messageId,
      sentAt: db().fn.now(),
      error: null,
      updatedAt: db().fn.now(),
    });
    return { status: 'sent', messageId: info.messageId };
  } catch (err) {
    const message = String((err as { response?: string }).response ?? (err as Error).message).slice(0, 1000);
    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    if (isTemporarySmtpFailure(err) && !lastAttempt) {
      // Nothing was accepted: give the row back so the retry can claim it again.
      await db()('deliveries').where({ id: deliveryId, tenantId, status: 'sending' }).update({ status: 'queued', error: message, smtpResponse: message, updatedAt: db().fn.now() });
      throw err;
    }
    await markFailed(deliveryId, tenantId, message);
    throw new UnrecoverableError(message);
  }
}

async function markFailed(deliveryId: string, tenantId: string, error: string) {
  await db()('deliveries').where({ id: deliveryId, tenantId }).update({ status: 'failed', error, smtpResponse: error, updatedAt: db().fn.now() });
}
