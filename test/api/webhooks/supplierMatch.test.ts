import { expect, it } from 'vitest';
import { createTeam } from '../../helpers/factories';
import { createSupplier } from '../../helpers/invoiceFactory';
import { db } from '../../../shared/db';
import { deleteSupplier, updateSupplier } from '../../../shared/commands/suppliers';
import { findSupplier } from '../../../shared/commands/webhooks/resolveSupplier';

// Step 3 of the pipeline matches the provider's merchant id through supplier_merchant_ids, which a
// trigger keeps in step with suppliers.merchant_ids (migration 20261125140000). What must hold:
// the current ids match, replaced ones no longer do, deleted suppliers and other tenants never,
// and of two suppliers with one id the older wins.
it('merchant id matching follows suppliers.merchant_ids: updates, deletes, tenants, oldest first', async () => {
  const { tenant, admin } = await createTeam();
  const other = await createTeam();
  const actor = { userId: admin.id, tenantId: tenant.id, role: 'admin' as const };
  const find = (merchantId: string, provider: 'stripe' | 'paypal' = 'stripe') =>
    db().transaction((trx) => findSupplier(trx, tenant.id, provider, { merchantId }, null));

  await createSupplier(other.tenant, { merchantIds: { stripe: 'cus_shared' } });
  expect(await find('cus_shared')).toBeNull(); // another tenant's supplier

  const first = await createSupplier(tenant, { merchantIds: { stripe: 'cus_1', paypal: 'PP1' } });
  expect(await find('cus_1')).toMatchObject({ supplierId: first.id, how: 'merchantId' });
  expect(await find('PP1', 'paypal')).toMatchObject({ supplierId: first.id });
  expect(await find('PP1')).toBeNull(); // the id belongs to its provider

  const second = await createSupplier(tenant, { merchantIds: { stripe: 'cus_2' } });
  await db().transaction((trx) => updateSupplier({ trx, actor }, second.id, { merchantIds: { stripe: 'cus_1' } }));
  expect(await find('cus_2')).toBeNull(); // replaced
  expect(await find('cus_1')).toMatchObject({ supplierId: first.id }); // both have it: the older

  await db().transaction((trx) => deleteSupplier({ trx, actor }, first.id));
  expect(await find('cus_1')).toMatchObject({ supplierId: second.id });
  await db().transaction((trx) => updateSupplier({ trx, actor }, second.id, { name: 'Umbenannt GmbH' }));
  expect(await find('cus_1')).toMatchObject({ supplierId: second.id, name: 'Umbenannt GmbH' });

  const rows = await db()('supplierMerchantIds').where({ tenantId: tenant.id }).orderBy(['provider', 'merchantId', 'supplierId']);
  expect(rows.map((r) => [r.provider, r.merchantId, r.supplierId])).toEqual(
    [
      ['paypal', 'PP1', first.id],
      ['stripe', 'cus_1', first.id],
      ['stripe', 'cus_1', second.id],
    ].sort((a, b) => (a.join() < b.join() ? -1 : 1)),
  );
});
