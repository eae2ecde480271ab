import { loadInvoiceView } from '../queries/invoices';
import { resolveEmailText } from './emailPreview';
import { audit } from '../audit';
import { invalidInput } from '../errors';
import { enqueueAfterCommit } from '../outbox';
import { QUEUES } from '../queues';
import { assertTransition } from '../domain/invoiceStates';
import { termsOnFinalization, todayVienna, yearOf } from '../domain/dates';
import { now } from '../clock';
import { customerSnapshot, sellerFromTenant } from '../queries/invoices';
import type { CommandContext } from './types';
import { activeCustomer, loadTenant, lockInvoice, nextInvoiceNumber } from './invoiceShared';


export interface SendInput {
  to?: string;
  subject?: string;
  message?: string;
}


/**
 * POST /api/invoices/:id/send. A draft is finalized (entwurf → offen) in this transaction: it
 * gets the next gapless number of its series (year of the new issue date), issueDate = today
 * (Vienna), dueDate = issueDate + paymentTermDays (invoice, else customer, else 14:
 * termsOnFinalization, which the e-mail preview of a draft asks too), and frozen snapshots of
 * customer and seller. An already finalized invoice (offen, teilbezahlt, bezahlt) is re-sent
 * without a state change. Either way the template variables in the given subject and message
 * (else the tenant's template) are resolved against the invoice as finalized, so the preview of
 * a draft, which keeps {{invoiceNumber}}, sent back unchanged mails the real number. A delivery
 * row is written and the e-mail job goes through the outbox, so it is queued only if the
 * transaction commits.
 */
export async function sendInvoice(
  { trx, actor }: CommandContext,
  id: string,
  input: SendInput,
): Promise<{ invoiceId: string; deliveryId: string; finalized: boolean }> {
  const tenantId = actor.tenantId;
  const row = await lockInvoice(trx, tenantId, id);
  const next = assertTransition(row.status, 'send', { type: row.type });
  const finalizing = row.status === 'entwurf';

  let number: string = row.number;
  let recipientEmail: string | null = row.customerSnapshot?.email ?? null;
  if (finalizing) {
    if (!row.customerId) throw invalidInput('Invoice has no customer', [{ field: 'customerId', message: 'is required to send' }]);
    const customer = await activeCustomer(trx, tenantId, row.customerId);
    const tenant = await loadTenant(trx, tenantId);
    // The business day in Vienna at the (injectable) clock: 00:30 Vienna on 1 April is April.
    const issueDate = todayVienna(now());
    const { paymentTermDays, dueDate } = termsOnFinalization(issueDate, row.paymentTermDays, customer.paymentTermDays);
    number = await nextInvoiceNumber(trx, tenantId, row.type, yearOf(issueDate), Number(issueDate.slice(5, 7)));
    recipientEmail = customer.email ?? null;
    await trx('invoices')
      .where({ tenantId, id })
      .update({
        status: next,
        number,
        issueDate,
        dueDate,
        paymentTermDays,
        customerSnapshot: JSON.stringify(customerSnapshot(customer)),
        sellerSnapshot: JSON.stringify(sellerFromTenant(tenant)),
        finalizedAt: trx.fn.now(),
        sentAt: trx.fn.now(),
        version: trx.raw('version + 1'),
        updatedAt: trx.fn.now(),
      });
  } else {
    if (!recipientEmail && row.customerId) {
      const c = await trx('customers').where({ tenantId, id: row.customerId }).first('email');
      recipientEmail = c?.email ?? null;
    }
    await trx('invoices').where({ tenantId, id }).update({ sentAt: trx.fn.now(), updatedAt: trx.fn.now() });
  }

  const to = input.to?.trim() || recipientEmail;
  if (!to) {
    throw invalidInput('No recipient: the customer has no e-mail address', [{ field: 'to', message: 'is required when the customer has no e-mail address' }]);
  }
  // Subject and text default to the tenant's e-mail template, as the send dialog's preview shows;
  // either way the variables are resolved now that the number and due date exist.
  const { subject, message } = await resolveEmailText(trx, tenantId, await loadInvoiceView(trx, tenantId, id), input);

  const [delivery] = await trx('deliveries')
    .insert({ tenantId, invoiceId: id, channel: 'email', to, subject, message, status: 'queued', createdBy: actor.userId })
    .returning('id');
  await enqueueAfterCommit(trx, {
    queue: QUEUES.email,
    name: 'send-invoice-email',
    jobId: `email-${delivery.id}`,
    data: { deliveryId: delivery.id, tenantId },
  });
  await audit(trx, actor, {
    action: finalizing ? 'invoice.finalized' : 'invoice.resent',
    entityType: 'invoice',
    entityId: id,
    data: { number, deliveryId: delivery.id, from: row.status, to: next },
  });
  return { invoiceId: id, deliveryId: delivery.id, finalized: finalizing };
}
