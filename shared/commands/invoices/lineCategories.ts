import type { Knex } from 'knex';
import { invalidInput } from '../../errors';
import { finalLineCategories, type ItemTaxContext } from '../../domain/invoiceChecks';
import { InvoiceItem } from '../../models/InvoiceItem';

/**
 * Decide every line's VAT category for good before a sales document is finalized (400 naming the
 * items that have none), and store the ones that changed since the draft was written.
 */
export async function settleLineCategories(trx: Knex.Transaction, tenantId: string, invoiceId: string, ctx: ItemTaxContext): Promise<void> {
  const lines = await InvoiceItem.query(trx)
    .where({ tenantId, invoiceId })
    .orderBy('position')
    .select('position', 'description', 'taxRate', 'taxCategory', 'exemptionReason', 'taxCategoryGiven');
  const { changed, details } = finalLineCategories(lines, ctx);
  if (details.length) throw invalidInput('The invoice has lines whose VAT situation is not decided; it was not finalized', details);
  for (const line of changed) {
    await InvoiceItem.query(trx)
      .where({ tenantId, invoiceId, position: line.position })
      .patch({ taxCategory: line.taxCategory, exemptionReason: line.exemptionReason });
  }
}
