import type { NormalizedEvent, ProviderSlug } from '../providers/payments/types';
import { TenantModel } from './BaseModel';

/** pending: stored, its job queued; the other four are final (docs/webhooks.md, "Statuses"). */
export type WebhookEventStatus = 'pending' | 'processed' | 'duplicate' | 'failed' | 'invalid_signature';

/**
 * One delivery from a payment provider, the log row the connector's webhook log shows. The job
 * books its `normalized` event and gives it its final status, invoice and processed_at.
 */
export class WebhookEvent extends TenantModel {
  static tableName = 'webhook_events';
  // jsonb: objection stringifies it on the way in (pg would not).
  static jsonAttributes = ['normalized'];

  declare connectorId: string | null;
  declare provider: ProviderSlug;
  /** The provider's event type (invoice.payment_succeeded, …). */
  declare event: string | null;
  declare status: WebhookEventStatus;
  /** The provider's event id. */
  declare externalId: string | null;
  /** The money movement's id, which is its invoice's externalId. */
  declare moneyExternalId: string | null;
  /** The verified event as the adapter mapped it (made storable); null for rejected deliveries. */
  declare normalized: NormalizedEvent | null;
  declare error: string | null;
  declare invoiceId: string | null;
  /** The delivery's bytes as received, kept only when what is stored of it had to be changed. */
  declare rawBody: Buffer | null;
  declare receivedAt: Date;
  declare processedAt: Date | null;
}
