import { expect, it } from 'vitest';
import { createTeam } from '../../helpers/factories';
import { createSupplier } from '../../helpers/invoiceFactory';
import { db } from '../../../shared/db';
import { createInvoice } from '../../../shared/commands/createInvoice';
import { seedChartOfAccounts } from '../../../shared/ledger/accounts';
import { postIncomingInvoice, postRefund, PostingError } from '../../../shared/ledger/posting';

// The posting is one statement that looks the accounts up by number and locks them: a missing
// account must fail before anything is written, and an invoice is never posted twice.
it('posting: a missing account writes nothing and names it; a good one posts once, balanced; a refund reverses it', async () => {
  const { tenant, admin } = await createTeam();
  await seedChartOfAccounts(db(), tenant.id, 'AT');
  const supplier = await createSupplier(tenant);
  const actor = { userId: admin.id, tenantId: tenant.id, role: 'admin' as const };
  const { id } = await createInvoice({ trx: db(), actor }, {
    type: 'eingangsrechnung', supplierId: supplier.id, invoiceNumber: 'ch_1', invoiceDate: '2026-11-20',
    items: [{ description: 'Zahlung', quantity: 1, unitPrice: '119.00', taxRate: '0' }],
  });
  const invoice = { id, tenantId: tenant.id, supplierId: supplier.id, invoiceDate: '2026-11-20', totalGross: '119.00', invoiceNumber: 'ch_1' };
  const entries = async () => Number((await db()('journalEntries').where({ tenantId: tenant.id }).count({ n: '*' }))[0].n);
  const post = (settings: { expenseAccount?: string; clearingAccount?: string }) =>
    db().transaction((trx) => postIncomingInvoice(trx, invoice, 'stripe', settings, 'Stripe ch_1'));

  await expect(post({ expenseAccount: '9999' })).rejects.toThrow(new PostingError("Expense account 9999 does not exist in the tenant's chart of accounts"));
  await expect(post({ clearingAccount: '8888' })).rejects.toThrow(new PostingError("Clearing account 8888 does not exist in the tenant's chart of accounts"));
  expect(await entries()).toBe(0);

  const posted = await post({});
  expect(posted).toMatchObject({ amount: '119.00', reversesEntryId: null, expenseSource: 'default' });
  const lines = await db()('journalLines as l').join('ledgerAccounts as a', 'a.id', 'l.accountId').where({ 'l.entryId': posted!.entryId }).select('a.number', 'l.debit', 'l.credit');
  expect(lines).toEqual(expect.arrayContaining([
    { number: posted!.debitAccount, debit: '119.00', credit: '0.00' },
    { number: posted!.creditAccount, debit: '0.00', credit: '119.00' },
  ]));
  expect(await post({})).toBeNull(); // posted already: never twice
  expect(await entries()).toBe(1);

  // A partial refund reverses the original's accounts, sides swapped.
  const { id: refundId } = await createInvoice({ trx: db(), actor }, {
    type: 'eingangsrechnung', supplierId: supplier.id, invoiceNumber: 're_1', invoiceDate: '2026-11-21',
    items: [{ description: 'Erstattung', quantity: 1, unitPrice: '-19.00', taxRate: '0' }],
  }, { allowNegative: true });
  const reversed = await db().transaction((trx) =>
    postRefund(trx, { id: refundId, tenantId: tenant.id, supplierId: supplier.id, invoiceDate: '2026-11-21', totalGross: '-19.00', invoiceNumber: 're_1', relatedInvoiceId: id }, 'stripe', {}, 'Stripe re_1'),
  );
  expect(reversed).toMatchObject({ amount: '19.00', reversesEntryId: posted!.entryId, debitAccount: posted!.creditAccount, creditAccount: posted!.debitAccount, expenseSource: 'original' });
  expect(await entries()).toBe(2);
});
