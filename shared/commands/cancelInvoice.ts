import { audit } from '../audit';
import { assertTransition } from '../domain/invoiceStates';
import { dec, fmtMoney } from '../domain/money';
import { amountDue } from '../domain/invoiceTotals';
import { todayVienna, yearOf } from '../domain/dates';
import { loadInvoiceView, sellerFromTenant } from '../queries/invoices';
import { emitEvent } from './outboundWebhooks/emitEvent';
import { postCancellationReversal } from '../ledger/posting';
import type { CommandContext } from './types';
import { Invoice } from '../models/Invoice';
import { lockInvoice } from './invoices/locking';
import { loadTenant } from './invoices/references';
import { nextInvoiceNumber } from './invoices/numbering';
import { copyItems } from './invoices/items';

/**
 * POST /api/invoices/:id/cancel: offen|teilbezahlt → storniert; incoming invoices also from bezahlt.
 * A finalized sales invoice cannot be changed (§ 11 UStG AT, § 14 UStG DE, GoBD), so it is
 * reversed by a credit note finalized here, which settles its open amount by offset and is linked
 * as credit_note_id. Quotes and incoming invoices get no credit note; a cancelled incoming invoice
 * is void, and its ledger entry is reversed in this transaction (docs/invoices.md, "Cancellation").
 */
export async function cancelInvoice({ trx, actor }: CommandContext, id: string): Promise<{ invoiceId: string; creditNoteId: string | null }> {
  const tenantId = actor.tenantId;
  const row = await lockInvoice(trx, tenantId, id);
  const next = assertTransition(row.status, 'cancel', { type: row.type });

  let creditNoteId: string | null = null;
  if (row.type === 'rechnung') {
    const tenant = await loadTenant(trx, tenantId);
    const issueDate = todayVienna();
    const number = await nextInvoiceNumber(trx, tenantId, 'gutschrift', yearOf(issueDate), Number(issueDate.slice(5, 7)));
    const offset = amountDue(row.totalGross, row.amountPaid);
    const settled = dec(offset).greaterThanOrEqualTo(dec(row.totalGross));
    const cn = await Invoice.query(trx)
      .insert({
        tenantId,
        type: 'gutschrift',
        status: settled ? 'bezahlt' : 'teilbezahlt',
        number,
        customerId: row.customerId,
        customerSnapshot: row.customerSnapshot,
        sellerSnapshot: sellerFromTenant(tenant),
        currency: row.currency,
        // The reversal converts at the rate the invoice was issued with, so both cancel out in EUR.
        exchangeRate: row.exchangeRate,
        exchangeRateDate: row.exchangeRateDate,
        exchangeRateSource: row.exchangeRateSource,
        issueDate,
        // The correction describes the original supply (§ 11 Abs. 1 Z 4 UStG AT, § 14 Abs. 4 Nr. 6
        // UStG DE): its service date, else the day the invoice stated by default, its issue date.
        // Without this the credit note would fall back to its own issue date, the cancellation day.
        serviceDate: row.serviceDate ?? row.issueDate,
        serviceEndDate: row.serviceEndDate,
        // The buyer's references of the invoice it corrects (XRechnung requires BT-10: BR-DE-15).
        buyerReference: row.buyerReference,
        orderReference: row.orderReference,
        dueDate: issueDate,
        paymentTermDays: 0,
        notes: `Storno zu ${row.number}`,
        footerText: row.footerText,
        customFields: row.customFields ?? {},
        totalNet: row.totalNet,
        totalTax: row.totalTax,
        totalGross: row.totalGross,
        taxBreakdown: row.taxBreakdown ?? [],
        amountPaid: fmtMoney(offset),
        relatedInvoiceId: row.id,
        finalizedAt: trx.fn.now(),
        createdBy: actor.userId,
      })
      .returning('*');
    creditNoteId = cn.id;
    await copyItems(trx, tenantId, row.id, cn.id);
    await emitEvent({ trx, actor }, 'invoice.created', () => loadInvoiceView(trx, tenantId, cn.id));
    await audit(trx, actor, {
      action: 'invoice.credit_note_created',
      entityType: 'invoice',
      entityId: cn.id,
      data: { number, reverses: row.id, reversesNumber: row.number, offset: fmtMoney(offset) },
    });
  }

  const reversal = row.type === 'eingangsrechnung' ? await postCancellationReversal(trx, tenantId, row.id) : null;

  await Invoice.query(trx)
    .where({ tenantId, id })
    .patch({ status: next, creditNoteId, cancelledAt: trx.fn.now(), version: trx.raw('version + 1'), updatedAt: trx.fn.now() });
  await audit(trx, actor, {
    action: 'invoice.cancelled',
    entityType: 'invoice',
    entityId: id,
    data: { from: row.status, creditNoteId, ...(reversal ? { reversalEntryId: reversal.entryId } : {}) },
  });
  await emitEvent({ trx, actor }, 'invoice.cancelled', () => loadInvoiceView(trx, tenantId, id));
  return { invoiceId: id, creditNoteId };
}
