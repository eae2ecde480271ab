import { recordWebhookOutcome } from '../../metrics';
import { WebhookEvent } from '../../models/WebhookEvent';
import { onCommit } from '../../outbox';
import { storable } from '../../storable';
import type { CommandContext } from '../types';

/**
 * A stored event given up: the job failed for good or ran out of attempts, or the maintenance
 * sweep found it pending too long. Only a row that is still pending changes, so a late call
 * never overwrites a booking. True if this call failed it.
 */
export async function failStoredEvent({ trx, actor }: CommandContext, input: { eventRowId: string; reason: string }): Promise<boolean> {
  const rows = await WebhookEvent.query(trx)
    .where({ id: input.eventRowId, tenantId: actor.tenantId, status: 'pending' })
    // The reason may quote the event (a currency, an amount): storable, as every text we keep of it.
    .patch({ status: 'failed', error: storable(input.reason.slice(0, 1000)), processedAt: trx.fn.now() })
    .returning('provider');
  for (const r of rows) onCommit(trx, () => recordWebhookOutcome(r.provider, 'failed'));
  return rows.length > 0;
}
