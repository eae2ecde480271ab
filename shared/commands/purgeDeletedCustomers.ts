import { audit } from '../audit';
import { customerSnapshot } from '../queries/invoices';
import { Customer } from '../models/Customer';
import { Invoice } from '../models/Invoice';
import type { CommandContext } from './types';

/** Customers are soft-deleted and permanently removed after 7 years (spec, Limits). */
export const CUSTOMER_RETENTION_YEARS = 7;

/**
 * Permanently remove customers soft-deleted more than 7 years ago. Invoices that still point at
 * such a customer get the customer's data as a snapshot first, so they stay complete (BAO § 132 /
 * GoBD retention); finalized invoices already carry one from finalization. Idempotent: a rerun
 * finds nothing left to purge. A maintenance command across tenants, so no actor: each audit row
 * names the customer's tenant.
 */
export async function purgeDeletedCustomers({ trx }: Pick<CommandContext, 'trx'>, opts: { tenantId?: string; now?: Date } = {}): Promise<{ purged: number }> {
  const now = opts.now ?? new Date();
  const cutoff = new Date(now);
  cutoff.setUTCFullYear(cutoff.getUTCFullYear() - CUSTOMER_RETENTION_YEARS);
  const q = Customer.query(trx).where('deletedAt', '<', cutoff).forUpdate().skipLocked().limit(1000);
  if (opts.tenantId) q.where('tenantId', opts.tenantId);
  const customers = await q;
  for (const c of customers) {
    // The snapshot finalization takes (phone included: the draft showed it), not a copy of its fields.
    await Invoice.query(trx)
      .where({ tenantId: c.tenantId, customerId: c.id })
      .whereNull('customerSnapshot')
      .patch({ customerSnapshot: customerSnapshot(c) });
    await Customer.query(trx).where({ tenantId: c.tenantId, id: c.id }).delete();
    await audit(trx, null, {
      tenantId: c.tenantId,
      action: 'customer.purged',
      entityType: 'customer',
      entityId: c.id,
      data: { deletedBefore: cutoff.toISOString() },
    });
  }
  return { purged: customers.length };
}
