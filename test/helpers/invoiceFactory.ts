import { randomUUID } from 'node:crypto';
import { runInTransaction } from '../../shared/outbox';
import { db } from '../../shared/db';
import type { Actor, Role } from '../../shared/actor';
import { createCustomer as createCustomerCmd, type CustomerInput } from '../../shared/commands/customers';
import { createSupplier as createSupplierCmd, type SupplierInput } from '../../shared/commands/suppliers';
import { createInvoice } from '../../shared/commands/createInvoice';
import { sendInvoice, type SendInput } from '../../shared/commands/sendInvoice';
import { recordPayment as recordPaymentCmd, type PaymentInput } from '../../shared/commands/recordPayment';
import { cancelInvoice as cancelInvoiceCmd } from '../../shared/commands/cancelInvoice';
import type { InvoiceInput } from '../../shared/domain/invoiceInput';
import { loadInvoiceView } from '../../shared/queries/invoices';
import type { CustomerView } from '../../shared/queries/customers';
import type { SupplierView } from '../../shared/queries/suppliers';
import type { InvoiceView } from '../../shared/domain/invoiceView';
import { todayVienna } from '../../shared/domain/dates';

/**
 * Factories for customers, suppliers and invoices. They go through the same commands as the API
 * (never raw SQL), so data made here obeys every business rule: numbers, totals, snapshots.
 * `user` is any { id, role } from test/helpers/factories.ts (createTeam / createUser); without
 * one, a system actor (admin rights, no user id) acts.
 */
type TenantRef = { id: string };
type UserRef = { id: string; role: Role } | null | undefined;

const actorFor = (tenant: TenantRef, user?: UserRef): Actor => ({
  tenantId: tenant.id,
  userId: user?.id ?? null,
  role: user?.role ?? 'admin',
});

export const defaultItems = () => [
  { description: 'Beratung', quantity: '10', unit: 'h', unitPrice: '120.00', taxRate: '20' },
  { description: 'Reisekosten', quantity: 1, unitPrice: '45.50', taxRate: '20' },
];

export async function createCustomer(tenant: TenantRef, overrides: Partial<CustomerInput> = {}, user?: UserRef): Promise<CustomerView> {
  return runInTransaction((trx) =>
    createCustomerCmd({ trx, actor: actorFor(tenant, user) }, { name: `Kunde ${randomUUID().slice(0, 6)}`, email: 'kunde@example.com', ...overrides }),
  );
}

/** A business customer with everything an e-invoice needs (address with postcode, VAT ID) and umlauts. */
export const createEInvoiceCustomer = (tenant: TenantRef) =>
  createCustomer(tenant, {
    name: 'Jürgen Größl',
    company: 'Größl & Söhne KG',
    email: 'buchhaltung@groessl.example',
    address: 'Landstraße 12\n4020 Linz',
    vatId: 'ATU87654321',
  });

export async function createSupplier(tenant: TenantRef, overrides: Partial<SupplierInput> = {}, user?: UserRef): Promise<SupplierView> {
  return runInTransaction((trx) => createSupplierCmd({ trx, actor: actorFor(tenant, user) }, { name: `Lieferant ${randomUUID().slice(0, 6)}`, ...overrides }));
}

/** A draft (entwurf). Creates a customer when overrides has no customerId; default items: net 1245.50, tax 249.10, gross 1494.60 (20 %). */
export async function createDraftInvoice(tenant: TenantRef, user?: UserRef, overrides: Partial<InvoiceInput> = {}): Promise<InvoiceView> {
  const type = overrides.type ?? 'rechnung';
  const customerId = type === 'eingangsrechnung' ? undefined : (overrides.customerId ?? (await createCustomer(tenant)).id);
  return runInTransaction(async (trx) => {
    const { id } = await createInvoice({ trx, actor: actorFor(tenant, user) }, { type, customerId, items: defaultItems(), ...overrides });
    return loadInvoiceView(trx, tenant.id, id);
  });
}

/** A finalized invoice (offen, numbered), sent through sendInvoice (queues an e-mail job). */
export async function createSentInvoice(tenant: TenantRef, user?: UserRef, overrides: Partial<InvoiceInput> = {}, send: SendInput = {}): Promise<InvoiceView> {
  const draft = await createDraftInvoice(tenant, user, overrides);
  return sendDraft(tenant, user, draft.id, send);
}

export async function sendDraft(tenant: TenantRef, user: UserRef, invoiceId: string, send: SendInput = {}): Promise<InvoiceView> {
  return runInTransaction(async (trx) => {
    await sendInvoice({ trx, actor: actorFor(tenant, user) }, invoiceId, { to: 'kunde@example.com', ...send });
    return loadInvoiceView(trx, tenant.id, invoiceId);
  });
}

/** An incoming invoice (eingangsrechnung, offen), with a supplier created when none is given. */
export async function createIncomingInvoice(tenant: TenantRef, user?: UserRef, overrides: Partial<InvoiceInput> = {}): Promise<InvoiceView> {
  const supplierId = overrides.supplierId ?? (await createSupplier(tenant)).id;
  return createDraftInvoice(tenant, user, {
    type: 'eingangsrechnung',
    supplierId,
    invoiceNumber: `ER-${randomUUID().slice(0, 8)}`,
    invoiceDate: todayVienna(),
    ...overrides,
  });
}

export async function recordPayment(
  tenant: TenantRef,
  user: UserRef,
  invoiceId: string,
  payment: Partial<PaymentInput> & { amount: string },
): Promise<InvoiceView> {
  return runInTransaction(async (trx) => {
    await recordPaymentCmd({ trx, actor: actorFor(tenant, user) }, invoiceId, { date: todayVienna(), method: 'bank_transfer', ...payment });
    return loadInvoiceView(trx, tenant.id, invoiceId);
  });
}

export async function cancelInvoice(tenant: TenantRef, user: UserRef, invoiceId: string) {
  return runInTransaction((trx) => cancelInvoiceCmd({ trx, actor: actorFor(tenant, user) }, invoiceId));
}

export const getInvoice = (tenant: TenantRef, id: string) => loadInvoiceView(db(), tenant.id, id);
