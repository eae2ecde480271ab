import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { db } from '../../../shared/db';
import { monthPeriod } from '../../../shared/domain/tax/period';
import { assertDatevRatesMapped, datevAccountsFit } from '../../../shared/queries/reports/datev';
import { loadReportTenant } from '../../../shared/queries/reports/vatReturn';
import { taxLine } from '../../helpers/taxLines';
import { createTeam } from '../../helpers/factories';
import { client } from '../../helpers/http';
import { useTestServer } from '../../helpers/server';
import { createCustomer, createIncomingInvoice, createSentInvoice, createSupplier } from '../../helpers/invoiceFactory';

/**
 * The DATEV download's checks before the first byte start from what the tenant has at all (its
 * rate combinations by index, its accounts from the small tables) and read the period's documents
 * only when something there might not fit (migration 20261127200000_datev_check_indexes). What
 * they answer must stay the period's: a rate or an account that does not fit in another month
 * refuses that month's download only.
 */
const ctx = useTestServer();

const DE = { country: 'DE', vatId: 'DE123456789', taxNumber: '9198011310010', address: 'Musterstraße 1\n10115 Berlin' };

/** The tenant's DATEV chart (PUT /api/settings would check its other settings too). */
const setDatevChart = (tenantId: string, chart: string) =>
  db()('tenants')
    .where({ id: tenantId })
    .update({ settings: JSON.stringify({ datev: { chart } }) });

async function sale(t: { id: string }, customerId: string, items: ReturnType<typeof taxLine>[], date: string) {
  const inv = await createSentInvoice(t, undefined, { customerId, items });
  await db()('invoices').where({ id: inv.id }).update({ issueDate: date, dueDate: date });
  return inv;
}

describe('DATEV checks: the period decides, not the tenant', () => {
  it('a rate the chart lacks refuses only the months it is booked in; foreign VAT at that rate passes', async () => {
    const team = await createTeam(DE);
    const t = team.tenant;
    // EKR has 20, 13, 10 and 0 %: a German tenant's 19 % and 7 % have no account in it.
    await setDatevChart(t.id, 'EKR');
    const c = await createCustomer(t, { name: 'Inland', country: 'DE' });
    await sale(t, c.id, [taxLine('100.00', '0', 'exempt', 'DE-4-14a')], '2026-03-10');
    await sale(t, c.id, [taxLine('100.00', '19')], '2026-02-10');
    await sale(t, c.id, [taxLine('100.00', '0', 'exempt', 'DE-4-14a'), taxLine('50.00', '7')], '2026-04-10');
    // Foreign VAT is booked at its gross without a key: 19 % of a foreign supplier needs no account.
    const s = await createSupplier(t, { name: 'EU Service B.V.' });
    const foreign = await createIncomingInvoice(t, undefined, { supplierId: s.id, invoiceDate: '2026-03-12', items: [taxLine('100.00', '19')] });
    await db()('invoiceItems').where({ invoiceId: foreign.id }).update({ taxCategory: 'foreignVat' });

    const http = client(ctx.server.url, { token: team.viewer.token });
    expect((await http.get('/api/reports/datev?year=2026&month=3')).status).toBe(200);
    const feb = await http.get('/api/reports/datev?year=2026&month=2');
    expect(feb.status).toBe(422);
    expect(feb.body.error.reason).toBe('UNSUPPORTED_TAX_RATE');
    expect(feb.body.error.message).toContain('19 %');
    const apr = await http.get('/api/reports/datev?year=2026&month=4');
    expect(apr.status).toBe(422);
    expect(apr.body.error.message).toContain('7 %');
    expect(apr.body.error.message).not.toContain('19');

    // A rate combination that is all mapped is not read at all: with SKR03 every month passes.
    await setDatevChart(t.id, 'SKR03');
    const tenant = await loadReportTenant(db(), t.id);
    for (const month of [2, 3, 4]) await expect(assertDatevRatesMapped(db(), tenant, monthPeriod(2026, month))).resolves.toBeUndefined();
    // A draft or a deleted draft at an unmapped rate is not in the books: it refuses nothing.
    await setDatevChart(t.id, 'EKR');
    await db()('invoices').where({ tenantId: t.id, issueDate: '2026-02-10' }).update({ status: 'entwurf', finalizedAt: null, deletedAt: new Date() });
    expect((await http.get('/api/reports/datev?year=2026&month=2')).status).toBe(200);
  });

  it("accounts that do not fit refuse only a period whose documents use them; the tenant's accounts all fitting skips the period's checks", async () => {
    const team = await createTeam({ country: 'AT' });
    const t = team.tenant;
    const tenant = await loadReportTenant(db(), t.id);
    expect(await datevAccountsFit(db(), tenant)).toBe(true);
    const long = await createSupplier(t, { name: 'Langkonto AG' });
    await db()('suppliers').where({ id: long.id }).update({ defaultExpenseAccount: '78000' });
    await db()('connectorInstallations').insert({
      tenantId: t.id,
      provider: 'stripe',
      tokenHash: randomUUID(),
      tokenEnc: 'x',
      secretsEnc: 'x',
      settings: JSON.stringify({ clearingAccount: '28910' }),
      active: true,
    });
    expect(await datevAccountsFit(db(), tenant)).toBe(false);
    const fits = await createSupplier(t, { name: 'Kurzkonto GmbH' });
    await createIncomingInvoice(t, null, { supplierId: fits.id, invoiceNumber: 'OK-1', invoiceDate: '2026-03-05', items: [taxLine('10.00', '20')] });
    await createIncomingInvoice(t, null, { supplierId: long.id, invoiceNumber: 'LONG-1', invoiceDate: '2026-04-05', items: [taxLine('10.00', '20')] });
    const http = client(ctx.server.url, { token: team.viewer.token });
    expect((await http.get('/api/reports/datev?year=2026&month=3')).status).toBe(200);
    const apr = await http.get('/api/reports/datev?year=2026&month=4');
    expect(apr.status).toBe(422);
    expect(apr.body.error.reason).toBe('ACCOUNT_LENGTH');
    expect(apr.body.error.message).toContain('"78000"');
    // A ledger account of the chart that does not fit makes the tenant's accounts not all fit.
    await db()('suppliers').where({ id: long.id }).update({ defaultExpenseAccount: '7600' });
    await db()('connectorInstallations').where({ tenantId: t.id }).update({ active: false });
    expect(await datevAccountsFit(db(), tenant)).toBe(true);
    await db()('ledgerAccounts').insert({ tenantId: t.id, number: '76000', name: 'Zu lang', kind: 'expense', chart: 'EKR' });
    expect(await datevAccountsFit(db(), tenant)).toBe(false);
    expect((await http.get('/api/reports/datev?year=2026&month=4')).status).toBe(200);
  });
});
