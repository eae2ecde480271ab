import type { Knex } from 'knex';
import type { ModelObject } from 'objection';
import { invalidInput, notFound } from '../../errors';
import { camelCaseKeys, runCompiledSql, type Db } from '../../db';
import { relatedInvoiceProblems } from '../../domain/invoiceChecks';
import { Customer } from '../../models/Customer';
import { Invoice } from '../../models/Invoice';
import { Supplier } from '../../models/Supplier';
import { Tenant } from '../../models/Tenant';
import { subscribersOf } from '../../queries/webhookSubscriptions';

/**
 * The rows an invoice refers to (tenant, customer, supplier, related invoice), checked as the
 * invoice commands need them. A bad reference in a body is 400 on that field, not 404.
 */

export async function loadTenant(trx: Db, tenantId: string): Promise<Tenant> {
  const t = await Tenant.query(trx).findById(tenantId);
  if (!t) throw notFound('Tenant');
  return t;
}

/** A customer row as PostgreSQL's row_to_json gives it: the timestamps as text. */
export type CustomerJson = Omit<ModelObject<Customer>, 'createdAt' | 'updatedAt' | 'deletedAt'> & {
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
};

export const customerDeleted = (field: string) =>
  invalidInput('Invalid customer', [{ field, message: 'customer has been deleted and cannot get new invoices' }]);

function usableCustomer<C extends { deletedAt: unknown }>(c: C | null | undefined, field: string): C {
  if (!c) throw invalidInput('Invalid customer', [{ field, message: 'customer does not exist' }]);
  if (c.deletedAt) throw customerDeleted(field);
  return c;
}

/**
 * A customer that may receive a new invoice: exists in this tenant and is not deleted. Locked
 * FOR SHARE so a concurrent customer delete waits for this transaction (and then sees the
 * invoice).
 */
export async function activeCustomer(trx: Knex.Transaction, tenantId: string, customerId: string, field = 'customerId'): Promise<Customer> {
  return usableCustomer(await Customer.query(trx).where({ tenantId, id: customerId }).forShare().first(), field);
}

/**
 * The tenant and, for an invoice to a customer, that customer (checked as activeCustomer() does)
 * in one statement: creating an invoice is a handful of round trips, and on a busy database host
 * each costs more than the query (docs/benchmarks.md). No lock here: the insert statement
 * re-checks the customer and locks it (insertInvoiceWithItems). Hand-written SQL: the create path is measured hot.
 * `subscribedTo`: an event type; `subscribed` then says whether an active webhook subscription of
 * the tenant names it (subscribersOf's question, asked in the same statement: one round trip less
 * on createInvoice's pool path).
 */
export async function loadTenantAndCustomer(
  trx: Db,
  tenantId: string,
  customerId: string | null | undefined,
  subscribedTo?: string,
): Promise<{ tenant: Pick<Tenant, 'country' | 'currency' | 'vatId' | 'settings'>; customer: CustomerJson | null; subscribed: boolean }> {
  if (!customerId) {
    const tenant = await loadTenant(trx, tenantId);
    return { tenant, customer: null, subscribed: subscribedTo ? (await subscribersOf(trx, tenantId, subscribedTo)).length > 0 : false };
  }
  const rows = await runCompiledSql<{
    country: string;
    currency: string;
    vatId: string | null;
    smallBusiness: boolean;
    customer: Record<string, unknown> | null;
    subscribed?: boolean;
  }>(trx, subscribedTo ? TENANT_CUSTOMER_SUBSCRIBED_SQL : TENANT_CUSTOMER_SQL, subscribedTo ? [customerId, subscribedTo, tenantId] : [customerId, tenantId]);
  if (!rows.length) throw notFound('Tenant');
  const { customer, smallBusiness, subscribed, ...tenant } = rows[0];
  return {
    tenant: { ...tenant, settings: { smallBusiness } },
    customer: usableCustomer(customer ? camelCaseKeys<CustomerJson>(customer) : null, 'customerId'),
    subscribed: subscribed === true,
  };
}

const TENANT_CUSTOMER_COLUMNS = `t.country, t.currency, t.vat_id as "vatId", coalesce((t.settings->>'smallBusiness')::boolean, false) as "smallBusiness",
       (select row_to_json(c) from customers c where c.tenant_id = t.id and c.id = ?) as customer`;
const TENANT_CUSTOMER_SQL = `select ${TENANT_CUSTOMER_COLUMNS}
     from tenants t where t.id = ?`;
// The same rows subscribersOf() selects.
const TENANT_CUSTOMER_SUBSCRIBED_SQL = `select ${TENANT_CUSTOMER_COLUMNS},
       exists (select 1 from webhook_subscriptions s
                where s.tenant_id = t.id and s.active = true and s.deleted_at is null and ? = any(s.events)) as subscribed
     from tenants t where t.id = ?`;

/** A supplier that may get a new incoming invoice; FOR SHARE as activeCustomer(). */
export async function activeSupplier(trx: Db, tenantId: string, supplierId: string): Promise<Supplier> {
  const s = await Supplier.query(trx).where({ tenantId, id: supplierId }).forShare().first();
  if (!s || s.deletedAt) {
    throw invalidInput('Invalid supplier', [{ field: 'supplierId', message: s ? 'supplier has been deleted' : 'supplier does not exist' }]);
  }
  return s;
}

/**
 * A credit note's related invoice is the invoice it corrects (relatedInvoiceProblems): an
 * invoice of this tenant, not deleted; else 400 INVALID_INPUT on relatedInvoiceId. Links the
 * service writes itself (convert, webhook refunds, cancel) are not checked here.
 */
export async function assertRelatedInvoice(
  trx: Db,
  tenantId: string,
  relatedInvoiceId: string | null | undefined,
  creditNote: { customerId: string | null | undefined; currency: string | null | undefined },
): Promise<{ id: string; number: string | null } | null> {
  if (!relatedInvoiceId) return null;
  const rel = await Invoice.query(trx)
    .where({ tenantId, id: relatedInvoiceId })
    .whereNull('deletedAt')
    .select('id', 'number', 'type', 'status', 'customerId', 'currency')
    .first();
  const problems = rel ? relatedInvoiceProblems(rel, creditNote) : ['invoice does not exist'];
  if (problems.length) {
    throw invalidInput(
      'Invoice failed validation',
      problems.map((message) => ({ field: 'relatedInvoiceId', message })),
    );
  }
  return { id: rel!.id, number: rel!.number };
}

/**
 * The supplier's invoice an imported credit note corrects (createInvoice's `einvoice.relatedInvoiceId`):
 * an incoming invoice of this tenant and the same supplier, not deleted; else 400 on relatedInvoiceId.
 * The link the sales rules check (assertRelatedInvoice) is the customer's; this one the supplier's.
 */
export async function assertRelatedIncomingInvoice(
  trx: Db,
  tenantId: string,
  relatedInvoiceId: string,
  creditNote: { supplierId: string | null | undefined },
): Promise<{ id: string; number: string | null }> {
  const rel = await Invoice.query(trx)
    .where({ tenantId, id: relatedInvoiceId })
    .whereNull('deletedAt')
    .select('id', 'invoiceNumber', 'type', 'supplierId')
    .first();
  const problem = !rel
    ? 'invoice does not exist'
    : rel.type !== 'eingangsrechnung'
      ? 'must be an incoming invoice (eingangsrechnung) of the same supplier'
      : rel.supplierId !== (creditNote.supplierId ?? null)
        ? 'belongs to another supplier: a credit note corrects an invoice of its own supplier'
        : null;
  if (problem) throw invalidInput('Invoice failed validation', [{ field: 'relatedInvoiceId', message: problem }]);
  return { id: rel!.id, number: rel!.invoiceNumber ?? null };
}
