import type { Knex } from 'knex';
import { notFound } from '../../errors';
import { Invoice } from '../../models/Invoice';

/**
 * The invoice locked FOR UPDATE, the first step of every command that changes one: concurrent
 * changes of the same invoice (two payments, a send and a cancel) run one after the other.
 * 404 if missing, deleted or another tenant's.
 */
export async function lockInvoice(trx: Knex.Transaction, tenantId: string, id: string): Promise<Invoice> {
  const row = await Invoice.query(trx).where({ tenantId, id }).whereNull('deletedAt').forUpdate().first();
  if (!row) throw notFound('Invoice');
  return row;
}
