import type { Db } from '../db';
import type { EInvoiceFormat, EmailFormatSource } from '../domain/einvoiceFormats';

/** queued → sending → sent | failed (shared/commands/emailDelivery.ts has the transitions). */
export type DeliveryStatus = 'queued' | 'sending' | 'sent' | 'failed';

/** One e-mail of one invoice (table `deliveries`): what to send, its state and the SMTP server's answer. */
export interface Delivery {
  id: string;
  tenantId: string;
  invoiceId: string;
  channel: string;
  to: string;
  subject: string;
  message: string;
  status: DeliveryStatus;
  attempts: number;
  smtpResponse: string | null;
  messageId: string | null;
  /** On a sent delivery a warning: what was sent differs from what was asked for. */
  error: string | null;
  /** What to attach, chosen by send; null on rows from before it was stored (the tenant setting decides). */
  format: EInvoiceFormat | null;
  formatSource: EmailFormatSource | null;
  /** Set on a dunning notice's e-mail, which attaches the notice's PDF (docs/dunning.md). */
  dunningNoticeId: string | null;
  createdBy: string | null;
  sentAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export async function loadDelivery(db: Db, tenantId: string, id: string): Promise<Delivery | undefined> {
  return db('deliveries').where({ tenantId, id }).first();
}

/** What of the tenant an invoice e-mail needs: replies go to its address, its settings pick the attachment. */
export interface MailSender {
  email: string | null;
  zugferdByDefault: boolean;
}

export async function loadMailSender(db: Db, tenantId: string): Promise<MailSender> {
  const row: { email: string | null; settings: { zugferdByDefault?: boolean } | null } | undefined = await db('tenants')
    .where({ id: tenantId })
    .first('settings', 'email');
  return { email: row?.email ?? null, zugferdByDefault: Boolean(row?.settings?.zugferdByDefault) };
}
