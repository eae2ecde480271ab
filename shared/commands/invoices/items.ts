import type { Knex } from 'knex';
import type { ModelObject } from 'objection';
import type { PreparedItems } from '../../domain/invoiceChecks';
import { InvoiceItem } from '../../models/InvoiceItem';

/** An item row as written, before the database gives it an id. */
export type NewInvoiceItem = Omit<ModelObject<InvoiceItem>, 'id'>;

/** The item rows prepareItems() describes, as written for invoice `invoiceId` (positions 1..N). */
export function itemRows(tenantId: string, invoiceId: string, prepared: PreparedItems): NewInvoiceItem[] {
  return prepared.items.map((it, i) => {
    const t = prepared.totals.lines[i];
    return {
      tenantId,
      invoiceId,
      position: i + 1,
      description: it.description,
      unit: it.unit,
      quantity: t.quantity,
      unitPrice: t.unitPrice,
      taxRate: t.taxRate,
      netAmount: t.netAmount,
      taxAmount: t.taxAmount,
      grossAmount: t.grossAmount,
      taxCategory: it.taxCategory,
      exemptionReason: it.exemptionReason,
      exemptionNote: it.exemptionNote,
      taxCategoryGiven: it.taxCategoryGiven,
    };
  });
}

/** Replace a draft's items with the prepared ones (full update), positions 1..N in array order. */
export async function replaceItems(trx: Knex.Transaction, tenantId: string, invoiceId: string, prepared: PreparedItems): Promise<void> {
  await InvoiceItem.query(trx).where({ tenantId, invoiceId }).delete();
  // Bulk insert in one statement, hand-written: a model insert would build an instance per item.
  await trx('invoiceItems').insert(itemRows(tenantId, invoiceId, prepared));
}

/** Copy an invoice's items to another of the same tenant (convert, cancellation's credit note), in one statement. */
export async function copyItems(trx: Knex.Transaction, tenantId: string, fromInvoiceId: string, toInvoiceId: string): Promise<void> {
  // Hand-written bulk insert … select: the rows never travel to the application.
  await trx.raw(
    `insert into invoice_items (tenant_id, invoice_id, position, description, unit, quantity, unit_price, tax_rate, net_amount, tax_amount, gross_amount,
                                tax_category, exemption_reason, exemption_note, tax_category_given)
     select tenant_id, ?, position, description, unit, quantity, unit_price, tax_rate, net_amount, tax_amount, gross_amount,
            tax_category, exemption_reason, exemption_note, tax_category_given
       from invoice_items where tenant_id = ? and invoice_id = ? order by position`,
    [toInvoiceId, tenantId, fromInvoiceId],
  );
}
