import { UnrecoverableError, type Job } from 'bullmq';
import { db } from '../../../shared/db';
import { config } from '../../../shared/config';
import { smtpTransport, isTemporarySmtpFailure } from '../../../shared/providers/mail/smtpTransport';
import type { NotifyWebhookDisabledPayload } from '../../../shared/jobs/catalog';
import { getWebhookSubscriptionAnyState, tenantAdminEmails } from '../../../shared/queries/webhookSubscriptions';

/**
 * Tell a tenant's admins that a webhook subscription was disabled after 3 days of failed
 * deliveries (docs/outbound-webhooks.md, "Operations"). One message to all of them; at least once:
 * a retry after the server accepted it sends it again under the same Message-ID.
 */
export async function notifyWebhookDisabledJob(job: Job<NotifyWebhookDisabledPayload>) {
  const { tenantId, subscriptionId, disabledAt } = job.data;
  const sub = await getWebhookSubscriptionAnyState(db(), tenantId, subscriptionId);
  if (!sub) return { status: 'skipped', reason: 'no-such-subscription' };
  const to = await tenantAdminEmails(db(), tenantId);
  if (!to.length) return { status: 'skipped', reason: 'no-admins' };
  const smtpUrl = config().smtp.url;
  if (!smtpUrl) throw new UnrecoverableError('E-mail is not configured on this server (SMTP_URL is not set)');
  const from = config().smtp.from;
  const domain = /@([^>\s]+)/.exec(from)?.[1] ?? 'localhost';
  const text = [
    'Guten Tag,',
    '',
    `the webhook subscription to ${sub.url} (${sub.id}) was disabled: every delivery to it failed for 3 days.`,
    `Last error: ${sub.lastError ?? 'unknown'}`,
    '',
    'No events are sent to it until an admin enables it again (PUT /api/webhook-subscriptions/<id> with "active": true).',
    'Failed deliveries can be sent again with POST /api/webhook-subscriptions/<id>/deliveries/<deliveryId>/redeliver.',
  ].join('\n');
  try {
    const info = await smtpTransport(smtpUrl).sendMail({
      from,
      to,
      subject: 'Webhook subscription disabled',
      text,
      messageId: `<webhook-disabled-${subscriptionId}-${disabledAt}@${domain}>`,
    });
    return { status: 'sent', messageId: info.messageId, recipients: to.length };
  } catch (err) {
    if (isTemporarySmtpFailure(err)) throw err;
    throw new UnrecoverableError(String((err as { response?: string }).response ?? (err as Error).message).slice(0, 1000));
  }
}
