import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../../shared/db';
import { runInTransaction } from '../../../shared/outbox';
import { PURCHASE_TAX_CANCELLATION_SOURCE, PURCHASE_TAX_SOURCE, postIncomingInvoice } from '../../../shared/ledger/posting';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createIncomingInvoice, createSupplier } from '../../helpers/invoiceFactory';

/**
 * The general ledger posts both sides of the VAT a purchase under reverse charge or an
 * intra-Community acquisition owes (docs/ledger.md): output VAT owed and input VAT deducted, the
 * same amount at the chart's standard rate on the net; a small-business tenant books the owed tax
 * as cost. Cancelling the invoice reverses that entry too.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

type Category = 'reverseCharge' | 'intraCommunitySupply';

/** An incoming invoice of 0 % lines with the given purchase categories, posted as auto-post does. */
async function postedPurchase(tenant: { id: string }, lines: Array<[string, Category]>) {
  const supplier = await createSupplier(tenant, { name: 'EU Lieferant' });
  const inv = await createIncomingInvoice(tenant, undefined, {
    supplierId: supplier.id,
    invoiceDate: '2026-03-12',
    items: lines.map(([unitPrice], i) => ({ description: `Position ${i + 1}`, quantity: '1', unitPrice, taxRate: '0' })),
  });
  // The purchase category as the incoming invoice stores it (docs/vat-categories.md).
  for (const [i, [, category]] of lines.entries()) {
    await db()('invoiceItems')
      .where({ invoiceId: inv.id, position: i + 1 })
      .update({ taxCategory: category });
  }
  const posted = await runInTransaction((trx) =>
    postIncomingInvoice(
      trx,
      { id: inv.id, tenantId: tenant.id, supplierId: supplier.id, invoiceDate: '2026-03-12', totalGross: inv.totalGross, invoiceNumber: inv.invoiceNumber! },
      'stripe',
      {},
      `Stripe ${inv.invoiceNumber}`,
    ),
  );
  return { invoice: inv, posted };
}

/** The lines of the invoice's entries of `sourceType`, as "account D|C amount", sorted. */
async function entryLines(tenantId: string, invoiceId: string, sourceType: string): Promise<string[]> {
  const rows: { number: string; debit: string; credit: string }[] = await db()('journalLines as jl')
    .join('journalEntries as je', 'je.id', 'jl.entryId')
    .join('ledgerAccounts as a', 'a.id', 'jl.accountId')
    .where({ 'je.tenantId': tenantId, 'je.sourceId': invoiceId, 'je.sourceType': sourceType })
    .select('a.number', 'jl.debit', 'jl.credit');
  return rows.map((r) => (Number(r.debit) > 0 ? `${r.number} D ${r.debit}` : `${r.number} C ${r.credit}`)).sort();
}

/** Per account, debits minus credits over all of the tenant's entries (zero after a full reversal). */
async function balances(tenantId: string): Promise<Record<string, string>> {
  const rows: { number: string; balance: string }[] = await db()('journalLines as jl')
    .join('ledgerAccounts as a', 'a.id', 'jl.accountId')
    .where({ 'jl.tenantId': tenantId })
    .groupBy('a.number')
    .select('a.number', db().raw('sum(jl.debit - jl.credit)::text as balance'));
  return Object.fromEntries(rows.map((r) => [r.number, r.balance]));
}

describe('ledger: purchases the buyer owes the VAT on', () => {
  it('SKR03: a § 13b service posts 19 % on 1577 (deducted) and 1787 (owed); the invoice entry stays expense / clearing', async () => {
    const team = await createTeam({ country: 'DE', vatId: 'DE123456789', taxNumber: '9198011310010', address: 'Musterstraße 1\n10115 Berlin' });
    const { invoice, posted } = await postedPurchase(team.tenant, [['1000.00', 'reverseCharge']]);
    expect(posted).toMatchObject({ debitAccount: '4900', creditAccount: '1361', amount: '1000.00' });
    expect(await entryLines(team.tenant.id, invoice.id, 'invoice')).toEqual(['1361 C 1000.00', '4900 D 1000.00']);
    expect(await entryLines(team.tenant.id, invoice.id, PURCHASE_TAX_SOURCE)).toEqual(['1577 D 190.00', '1787 C 190.00']);
    expect(posted?.purchaseTax?.lines).toHaveLength(2);

    // Cancelling reverses both entries: every account nets to zero.
    const cancel = await client(server.url, { token: team.manager.token }).post(`/api/invoices/${invoice.id}/cancel`);
    expect(cancel.status).toBe(200);
    expect(await entryLines(team.tenant.id, invoice.id, PURCHASE_TAX_CANCELLATION_SOURCE)).toEqual(['1577 C 190.00', '1787 D 190.00']);
    for (const [account, balance] of Object.entries(await balances(team.tenant.id))) expect(Number(balance), account).toBe(0);
  });

  it('EKR: an intra-Community acquisition posts 20 % on 2505 / 3505; a mixed invoice posts each kind on its accounts', async () => {
    const team = await createTeam({ country: 'AT' });
    const { invoice } = await postedPurchase(team.tenant, [['500.00', 'intraCommunitySupply']]);
    expect(await entryLines(team.tenant.id, invoice.id, PURCHASE_TAX_SOURCE)).toEqual(['2505 D 100.00', '3505 C 100.00']);

    const mixed = await postedPurchase(team.tenant, [
      ['300.00', 'reverseCharge'],
      ['200.00', 'intraCommunitySupply'],
    ]);
    expect(await entryLines(team.tenant.id, mixed.invoice.id, PURCHASE_TAX_SOURCE)).toEqual(['2505 D 40.00', '2506 D 60.00', '3505 C 40.00', '3506 C 60.00']);
  });

  it('a small-business tenant owes the tax but books it as cost on the expense account', async () => {
    const team = await createTeam({
      country: 'DE',
      vatId: 'DE987654321',
      taxNumber: '9198011310011',
      address: 'Musterstraße 2\n10115 Berlin',
      settings: JSON.stringify({ smallBusiness: true }),
    });
    const { invoice } = await postedPurchase(team.tenant, [['1000.00', 'reverseCharge']]);
    expect(await entryLines(team.tenant.id, invoice.id, PURCHASE_TAX_SOURCE)).toEqual(['1787 C 190.00', '4900 D 190.00']);
  });

  it('an invoice without such lines posts no tax entry (webhook payments: 0 %, no category)', async () => {
    const team = await createTeam({ country: 'AT' });
    const supplier = await createSupplier(team.tenant, { name: 'Inland' });
    const inv = await createIncomingInvoice(team.tenant, undefined, {
      supplierId: supplier.id,
      invoiceDate: '2026-03-12',
      items: [{ description: 'Zahlung', quantity: '1', unitPrice: '80.00', taxRate: '0' }],
    });
    const posted = await runInTransaction((trx) =>
      postIncomingInvoice(
        trx,
        {
          id: inv.id,
          tenantId: team.tenant.id,
          supplierId: supplier.id,
          invoiceDate: '2026-03-12',
          totalGross: inv.totalGross,
          invoiceNumber: inv.invoiceNumber!,
        },
        'stripe',
        {},
        'Stripe',
      ),
    );
    expect(posted?.purchaseTax).toBeUndefined();
    expect(await entryLines(team.tenant.id, inv.id, PURCHASE_TAX_SOURCE)).toEqual([]);
  });
});
