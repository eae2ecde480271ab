import { audit } from '../audit';
import { dependency, invalidInput, notFound, type ErrorDetail } from '../errors';
import { vatIdCountry } from '../domain/vatId';
import { isCurrency } from '../domain/currencies';
import { toCustomerView, type CustomerView } from '../queries/customers';
import type { CommandContext } from './types';
import { cleanPartyFields } from './partyFields';
import { emitEvent } from './outboundWebhooks/emitEvent';
import { customerSnapshot } from '../queries/invoices';
import { Customer, type EInvoiceFormat } from '../models/Customer';
import { checkPeppolId, type PeppolId } from '../domain/peppolId';
import type { CustomerType } from '../domain/dunning/interest';
import { bumpLiveCustomerInvoices, lockLiveCustomerInvoices } from '../documents/liveVersions';

/**
 * Customer use cases. Field formats are checked by the route schema; the rules that need code
 * (VAT ID per country prefix, currency list) are checked here too, so jobs get the same rules.
 */
export interface CustomerInput {
  name?: string;
  company?: string | null;
  email?: string | null;
  phone?: string | null;
  address?: string | null;
  vatId?: string | null;
  country?: string | null;
  currency?: string | null;
  paymentTermDays?: number | null;
  color?: string | null;
  buyerReference?: string | null;
  peppolId?: PeppolId | null;
  einvoiceFormat?: EInvoiceFormat | null;
  /** Business or consumer for statutory default interest (docs/dunning.md); null: derived from VAT id / company. */
  customerType?: CustomerType | null;
}

const FIELDS: (keyof CustomerInput)[] = [
  'name',
  'company',
  'email',
  'phone',
  'address',
  'vatId',
  'country',
  'currency',
  'paymentTermDays',
  'color',
  'buyerReference',
  'peppolId',
  'einvoiceFormat',
  'customerType',
];

function clean(input: CustomerInput): Partial<Customer> {
  const details: ErrorDetail[] = [];
  const out = cleanPartyFields(input, FIELDS, details);
  if (typeof out.currency === 'string') {
    out.currency = out.currency.toUpperCase();
    if (!isCurrency(out.currency)) details.push({ field: 'currency', message: 'must be a supported ISO 4217 currency code, e.g. EUR' });
  }
  if (out.peppolId) {
    const checked = checkPeppolId(out.peppolId as PeppolId, 'peppolId');
    if ('details' in checked) details.push(...checked.details);
    else out.peppolId = checked.value;
  }
  if (details.length) throw invalidInput('Customer failed validation', details);
  // A customer without an explicit country gets the one of its VAT ID (for e-invoices).
  if (typeof out.vatId === 'string' && !out.country && !('country' in input && input.country)) {
    out.country = vatIdCountry(out.vatId as string);
  }
  return out;
}

export async function createCustomer({ trx, actor }: CommandContext, input: CustomerInput): Promise<CustomerView> {
  if (!input.name) throw invalidInput('Customer failed validation', [{ field: 'name', message: 'is required' }]);
  const values = clean(input);
  const row = await Customer.query(trx)
    .insert({ ...values, tenantId: actor.tenantId })
    .returning('*');
  await audit(trx, actor, { action: 'customer.created', entityType: 'customer', entityId: row.id });
  const view = toCustomerView(row);
  await emitEvent({ trx, actor }, 'customer.created', view);
  return view;
}

/**
 * Partial update: fields present in the input replace the stored ones, null clears a field.
 * Drafts show their customer live, so a change to what an invoice shows of the customer gives
 * them a new version (their cached PDFs are keyed by it: shared/documents/liveVersions.ts).
 */
export async function updateCustomer({ trx, actor }: CommandContext, id: string, input: CustomerInput): Promise<CustomerView> {
  await lockLiveCustomerInvoices(trx, actor.tenantId, id);
  const existing = await Customer.query(trx).where({ tenantId: actor.tenantId, id }).whereNull('deletedAt').forUpdate().first();
  if (!existing) throw notFound('Customer');
  const values = clean(input);
  const [row] = await Customer.query(trx)
    .where({ tenantId: actor.tenantId, id })
    .patch({ ...values, updatedAt: trx.fn.now() })
    .returning('*');
  if (JSON.stringify(customerSnapshot(existing)) !== JSON.stringify(customerSnapshot(row))) {
    await bumpLiveCustomerInvoices(trx, actor.tenantId, id);
  }
  await audit(trx, actor, { action: 'customer.updated', entityType: 'customer', entityId: id, data: { fields: Object.keys(values) } });
  const view = toCustomerView(row);
  await emitEvent({ trx, actor }, 'customer.updated', view);
  return view;
}

/**
 * Soft delete. A customer with open or partially paid invoices still owes money and stays
 * (400 DEPENDENCY); one with only drafts or settled invoices is soft-deleted, its finalized
 * invoices keep their customer snapshot. The row lock serializes this with invoice creation.
 */
export async function deleteCustomer({ trx, actor }: CommandContext, id: string): Promise<void> {
  const existing = await Customer.query(trx).where({ tenantId: actor.tenantId, id }).whereNull('deletedAt').forUpdate().first();
  if (!existing) throw notFound('Customer');
  const open = await trx('invoices')
    .where({ tenantId: actor.tenantId, customerId: id })
    .whereIn('status', ['offen', 'teilbezahlt'])
    .whereNot('type', 'angebot')
    .whereNull('deletedAt')
    .count<{ count: number }[]>({ count: '*' });
  const count = Number(open[0].count);
  if (count > 0) {
    throw dependency(`Customer has ${count} open or partially paid invoice(s); settle or cancel them before deleting the customer`);
  }
  await Customer.query(trx).where({ tenantId: actor.tenantId, id }).patch({ deletedAt: trx.fn.now(), updatedAt: trx.fn.now() });
  // The customer as deleted (deletedAt set): the API's GET no longer shows it.
  await emitEvent({ trx, actor }, 'customer.deleted', async () => toCustomerView((await Customer.query(trx).where({ tenantId: actor.tenantId, id }).first())!));
  await audit(trx, actor, { action: 'customer.deleted', entityType: 'customer', entityId: id });
}
