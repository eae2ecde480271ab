import { describe, expect, it } from 'vitest';
import { db } from '../../../shared/db';
import { datevBookings } from '../../../shared/queries/reports/datev';
import { bwaFigures } from '../../../shared/queries/reports/bwa';
import { loadReportTenant } from '../../../shared/queries/reports/vatReturn';
import { monthPeriod } from '../../../shared/domain/tax/period';
import { createTeam } from '../../helpers/factories';
import { createCustomer, createIncomingInvoice, createSentInvoice, createSupplier, recordPayment } from '../../helpers/invoiceFactory';

/**
 * DATEV rows and BWA figures are in EUR: a foreign-currency document converts with its stored
 * exchange rate (units per EUR, amount / rate half away from zero to the cent), its payments at
 * the same rate. The report routes still refuse such documents (422 FOREIGN_CURRENCY, currency.test),
 * so this reads the queries directly, as the routes will once that gate is lifted.
 */
describe('DATEV and BWA convert foreign-currency documents with their stored rate', () => {
  it('USD sale, its payment and a USD incoming invoice in EUR; EUR documents unchanged', async () => {
    const team = await createTeam({ country: 'AT' });
    const t = team.tenant;
    const us = await createCustomer(t, { name: 'US Customer', company: 'Acme Corp', country: 'US' });
    const sale = await createSentInvoice(t, null, {
      customerId: us.id,
      currency: 'USD',
      exchangeRate: { rate: '1.0900', date: '2026-03-12', source: 'manual' },
      items: [{ description: 'Beratung', quantity: '1', unitPrice: '1000.00', taxRate: '0', taxCategory: 'export' }],
    });
    await db()('invoices').where({ id: sale.id }).update({ issueDate: '2026-03-12', dueDate: '2026-03-12' });
    await recordPayment(t, null, sale.id, { amount: '545.00', date: '2026-03-20' });
    const supplier = await createSupplier(t, { name: 'US Cloud Inc.' });
    await createIncomingInvoice(t, null, {
      supplierId: supplier.id,
      invoiceDate: '2026-03-15',
      currency: 'USD',
      exchangeRate: { rate: '1.0900', date: '2026-03-15', source: 'manual' },
      items: [{ description: 'Hosting', quantity: '1', unitPrice: '100.00', taxRate: '0' }],
    });
    const home = await createCustomer(t, { name: 'Inland', country: 'AT' });
    const eur = await createSentInvoice(t, null, { customerId: home.id, items: [{ description: 'X', quantity: '1', unitPrice: '100.00', taxRate: '20' }] });
    await db()('invoices').where({ id: eur.id }).update({ issueDate: '2026-03-12', dueDate: '2026-03-12' });

    const tenant = await loadReportTenant(db(), t.id);
    const rows: string[] = [];
    for await (const batch of datevBookings(tenant, monthPeriod(2026, 3))) {
      for (const b of batch) rows.push([b.amount, b.debitCredit, b.account, b.contraAccount, b.buKey ?? ''].join('|'));
    }
    expect(rows.sort()).toEqual(
      [
        '917.43|S|2000|4110|', // 1000.00 USD / 1.09 (export)
        '120.00|S|2000|4000|3', // EUR invoice unchanged
        '91.74|H|3300|7890|', // 100.00 USD / 1.09
        '500.00|S|2800|2000|', // payment 545.00 USD at the invoice's rate
      ].sort(),
    );

    const bwa = await bwaFigures(db(), tenant, 2026);
    expect(bwa.total.revenue.current).toBe('1017.43');
    expect(bwa.total.totalExpenses.current).toBe('91.74');
  });
});
