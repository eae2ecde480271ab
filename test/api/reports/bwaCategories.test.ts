import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../../shared/db';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createCustomer, createIncomingInvoice, createSentInvoice, createSupplier } from '../../helpers/invoiceFactory';

/**
 * The BWA's revenue holds the net of every VAT category (exempt, IC supply, export, not subject
 * are turnover like the standard-rated); a small-business tenant deducts no VAT, so its purchases
 * cost their gross plus the VAT owed on reverse-charge purchases (docs/reports.md, "BWA").
 */
let server: Awaited<ReturnType<typeof startTestServer>>;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const item = (unitPrice: string, taxRate: string) => ({ description: 'Leistung', quantity: '1', unitPrice, taxRate });

async function purchase(tenant: { id: string }, items: ReturnType<typeof item>[], category?: 'reverseCharge') {
  const supplier = await createSupplier(tenant, { name: 'Lieferant' });
  const inv = await createIncomingInvoice(tenant, undefined, { supplierId: supplier.id, invoiceDate: '2026-03-12', items });
  if (category) await db()('invoiceItems').where({ invoiceId: inv.id }).update({ taxCategory: category });
  return inv;
}

async function bwaTotal(token: string) {
  const res = await client(server.url, { token }).get('/api/reports/bwa?year=2026');
  expect(res.status).toBe(200);
  return res.body.total as { revenue: { current: string }; totalExpenses: { current: string } };
}

describe('BWA and VAT categories', () => {
  it('revenue is the net of every category; a VAT-registered tenant books purchases net (RC tax deducted)', async () => {
    const team = await createTeam({ country: 'DE', vatId: 'DE123456789', taxNumber: '9198011310010', address: 'Musterstraße 1\n10115 Berlin' });
    const t = team.tenant;
    const home = await createCustomer(t, { name: 'Inland', country: 'DE' });
    const fr = await createCustomer(t, { name: 'FR', company: 'Client SARL', country: 'FR', vatId: 'FR40303265045' });
    const ch = await createCustomer(t, { name: 'CH', company: 'Kunde AG', country: 'CH' });
    const sales = [
      await createSentInvoice(t, undefined, {
        customerId: home.id,
        items: [item('100.00', '19'), { ...item('300.00', '0'), taxCategory: 'exempt', exemptionReason: 'DE-4-14a' }],
      }),
      await createSentInvoice(t, undefined, { customerId: fr.id, items: [{ ...item('500.00', '0'), taxCategory: 'intraCommunitySupply' }] }),
      await createSentInvoice(t, undefined, {
        customerId: ch.id,
        items: [
          { ...item('700.00', '0'), taxCategory: 'export' },
          { ...item('800.00', '0'), taxCategory: 'notSubject' },
        ],
      }),
    ];
    for (const s of sales) await db()('invoices').where({ id: s.id }).update({ issueDate: '2026-03-10' });
    await purchase(t, [item('100.00', '19')]);
    await purchase(t, [item('1000.00', '0')], 'reverseCharge');
    const total = await bwaTotal(team.viewer.token);
    expect(total.revenue.current).toBe('2400.00');
    expect(total.totalExpenses.current).toBe('1100.00');
  });

  it('small business: purchases cost gross, plus the § 13b tax owed', async () => {
    const team = await createTeam({
      country: 'DE',
      vatId: 'DE987654321',
      taxNumber: '9198011310011',
      address: 'Musterstraße 2\n10115 Berlin',
      settings: JSON.stringify({ smallBusiness: true }),
    });
    const t = team.tenant;
    const home = await createCustomer(t, { name: 'Inland', country: 'DE' });
    const sale = await createSentInvoice(t, undefined, { customerId: home.id, items: [item('150.00', '0')] });
    await db()('invoices').where({ id: sale.id }).update({ issueDate: '2026-03-10' });
    await purchase(t, [item('100.00', '19')]);
    await purchase(t, [item('1000.00', '0')], 'reverseCharge');
    const total = await bwaTotal(team.viewer.token);
    expect(total.revenue.current).toBe('150.00');
    // 119.00 gross + 1000.00 net + 190.00 owed and not deductible
    expect(total.totalExpenses.current).toBe('1309.00');
  });
});
