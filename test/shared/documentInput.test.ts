import { expect, it } from 'vitest';
import { db } from '../../shared/db';
import { createTeam } from '../helpers/factories';
import {
  cancelInvoice,
  createCustomer,
  createDraftInvoice,
  createIncomingInvoice,
  createSentInvoice,
  createSupplier,
  recordPayment,
} from '../helpers/invoiceFactory';
import { loadDocumentInput, loadInvoiceView, sellerFromTenant } from '../../shared/queries/invoices';
import { loadDocumentSnapshot, SNAPSHOT } from '../../shared/queries/documentSnapshot';

/**
 * What document renderers get (loadDocumentInput / loadDocumentSnapshot, one statement since
 * issue 31) must be what the API shows of the invoice (its single read, without the e-mail
 * deliveries no document shows) and the seller as frozen at finalization, or the tenant's live
 * data for a draft.
 */
it('the document input of drafts, sent, paid, cancelled, credit notes and incoming invoices equals the single read and the seller', async () => {
  const { tenant, admin } = await createTeam();
  await db()('tenants')
    .where({ id: tenant.id })
    .update({ settings: JSON.stringify({ contactName: 'Eva Muster', contactEmail: 'eva@example.at', peppolId: '9915:atu12345678' }) });
  const customer = await createCustomer(tenant, { vatId: 'DE123456789', address: 'Hauptstr. 1\n10115 Berlin', country: 'DE' });
  const supplier = await createSupplier(tenant);
  const items = [
    { description: 'Beratung', unit: 'h', quantity: '2.5', unitPrice: '99.99', taxRate: '20' },
    { description: 'Buch', quantity: 3, unitPrice: '12.40', taxRate: '10' },
  ];
  const draft = await createDraftInvoice(tenant, admin, { customerId: customer.id, items });
  const sent = await createSentInvoice(tenant, admin, { customerId: customer.id, items });
  await recordPayment(tenant, admin, sent.id, { amount: '10.00' });
  const cancelled = await createSentInvoice(tenant, admin, { customerId: customer.id, items });
  const { creditNoteId } = await cancelInvoice(tenant, admin, cancelled.id).then(() => loadInvoiceView(db(), tenant.id, cancelled.id));
  const incoming = await createIncomingInvoice(tenant, admin, { supplierId: supplier.id, invoiceNumber: 'ER-1', items });
  // The tenant changes after finalization: sent documents keep the seller they were issued with.
  const tenantBefore = await db()('tenants').where({ id: tenant.id }).first();
  await db()('tenants').where({ id: tenant.id }).update({ name: 'Renamed GmbH', iban: 'AT611904300234573201' });
  const tenantNow = await db()('tenants').where({ id: tenant.id }).first();

  for (const id of [draft.id, sent.id, cancelled.id, creditNoteId!, incoming.id]) {
    const input = await loadDocumentInput(db(), tenant.id, id);
    const { deliveries: _deliveries, ...view } = await loadInvoiceView(db(), tenant.id, id);
    expect(input.invoice).toEqual(view);
    const { sellerSnapshot } = await db()('invoices').where({ id }).first('sellerSnapshot');
    const expectedSeller = sellerSnapshot ? { ...sellerFromTenant(tenantNow), ...sellerSnapshot } : sellerFromTenant(tenantNow);
    expect(input.seller).toEqual(expectedSeller);
    if (id === sent.id) expect(input.seller.name).toBe(tenantBefore.name);
    if (id === draft.id) expect(input.seller).toMatchObject({ name: 'Renamed GmbH', contactName: 'Eva Muster', peppolId: '9915:atu12345678' });
  }

  // The snapshot: version and content of one statement; null at another version, for another tenant, deleted.
  const other = await createTeam();
  await db().transaction(async (trx) => {
    const snap = await loadDocumentSnapshot(trx, tenant.id, sent.id);
    expect(snap?.input).toEqual(await loadDocumentInput(trx, tenant.id, sent.id));
    expect(await loadDocumentSnapshot(trx, tenant.id, sent.id, snap!.version + 1)).toBeNull();
    expect(await loadDocumentSnapshot(trx, other.tenant.id, sent.id)).toBeNull();
  }, SNAPSHOT);
  await db()('invoices').where({ id: draft.id }).update({ deletedAt: new Date() });
  await expect(loadDocumentInput(db(), tenant.id, draft.id)).rejects.toMatchObject({ status: 404 });
});
