import type { PartialModelObject } from 'objection';
import type { InvoiceTotals } from '../../domain/invoiceTotals';
import type { InvoiceInput } from '../../domain/invoiceInput';
import type { Invoice } from '../../models/Invoice';

/** The invoice columns the totals fill, as create and full update write them. */
export const totalsColumns = (t: InvoiceTotals) =>
  ({
    totalNet: t.totalNet,
    totalTax: t.totalTax,
    totalGross: t.totalGross,
    taxBreakdown: t.taxBreakdown,
  }) satisfies PartialModelObject<Invoice>;

/** The columns a draft's content consists of, as create and full update write them. */
export function contentColumns(input: InvoiceInput) {
  return {
    supplierId: input.supplierId ?? null,
    serviceDate: input.serviceDate ?? null,
    serviceEndDate: input.serviceEndDate ?? null,
    buyerReference: input.buyerReference?.trim() || null,
    orderReference: input.orderReference?.trim() || null,
    paymentTermDays: input.paymentTermDays ?? null,
    notes: input.notes ?? null,
    footerText: input.footerText ?? null,
    customFields: input.customFields ?? {},
    detailsMarkdown: input.detailsMarkdown ?? null,
    relatedInvoiceId: input.relatedInvoiceId ?? null,
    invoiceNumber: input.invoiceNumber ?? null,
    invoiceDate: input.invoiceDate ?? null,
  } satisfies PartialModelObject<Invoice>;
}
