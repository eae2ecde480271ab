import { audit } from '../audit';
import { assertTransition } from '../domain/invoiceStates';
import type { CommandContext } from './types';
import { Invoice } from '../models/Invoice';
import { lockInvoice } from './invoices/locking';
import { emitEvent } from './outboundWebhooks/emitEvent';
import { loadInvoiceView } from '../queries/invoices';

/** Soft delete; only drafts and cancelled invoices (spec rule 3), else 400 IMMUTABLE. */
export async function deleteInvoice({ trx, actor }: CommandContext, id: string): Promise<void> {
  const row = await lockInvoice(trx, actor.tenantId, id);
  assertTransition(row.status, 'delete', { type: row.type });
  // The invoice as it was: once deleted the API no longer shows it.
  await emitEvent({ trx, actor }, 'invoice.deleted', () => loadInvoiceView(trx, actor.tenantId, id));
  await Invoice.query(trx).where({ tenantId: actor.tenantId, id }).patch({ deletedAt: trx.fn.now(), updatedAt: trx.fn.now() });
  await audit(trx, actor, { action: 'invoice.deleted', entityType: 'invoice', entityId: id, data: { status: row.status, number: row.number } });
}
