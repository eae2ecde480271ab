import { audit } from '../audit';
import { assertTransition } from '../domain/invoiceStates';
import { todayVienna } from '../domain/dates';
import type { CommandContext } from './types';
import { Invoice } from '../models/Invoice';
import { lockInvoice } from './invoices/locking';
import { activeCustomer } from './invoices/references';
import { copyItems } from './invoices/items';
import { emitEvent } from './outboundWebhooks/emitEvent';
import { loadInvoiceView } from '../queries/invoices';

/**
 * POST /api/invoices/:id/convert: a quote (angebot, entwurf or offen) becomes a new draft
 * rechnung with the same customer, items and texts; relatedInvoiceId points at the quote. The
 * quote itself is unchanged (it stays a record of what was offered). detailsMarkdown belongs to
 * quotes only and is not copied. The customer must still be active. No exchange rate is copied:
 * the invoice gets its own when it is sent (docs/exchange-rates.md).
 */
export async function convertQuote({ trx, actor }: CommandContext, quoteId: string): Promise<{ id: string }> {
  const tenantId = actor.tenantId;
  const quote = await lockInvoice(trx, tenantId, quoteId);
  assertTransition(quote.status, 'convert', { type: quote.type });
  if (quote.customerId) await activeCustomer(trx, tenantId, quote.customerId);
  const row = await Invoice.query(trx)
    .insert({
      tenantId,
      type: 'rechnung',
      status: 'entwurf',
      customerId: quote.customerId,
      currency: quote.currency,
      issueDate: todayVienna(),
      serviceDate: quote.serviceDate,
      serviceEndDate: quote.serviceEndDate,
      paymentTermDays: quote.paymentTermDays,
      notes: quote.notes,
      footerText: quote.footerText,
      customFields: quote.customFields ?? {},
      totalNet: quote.totalNet,
      totalTax: quote.totalTax,
      totalGross: quote.totalGross,
      taxBreakdown: quote.taxBreakdown ?? [],
      relatedInvoiceId: quote.id,
      createdBy: actor.userId,
    })
    .returning('*');
  await copyItems(trx, tenantId, quote.id, row.id);
  await audit(trx, actor, { action: 'invoice.converted', entityType: 'invoice', entityId: row.id, data: { fromQuote: quote.id, quoteNumber: quote.number } });
  await emitEvent({ trx, actor }, 'invoice.created', () => loadInvoiceView(trx, tenantId, row.id));
  return { id: row.id };
}
