import { expect, it } from 'vitest';
import { createTeam } from '../../helpers/factories';
import { createSupplier } from '../../helpers/invoiceFactory';
import { db } from '../../../shared/db';
import { createInvoice } from '../../../shared/commands/createInvoice';
import { seedChartOfAccounts } from '../../../shared/ledger/accounts';
import { chartForCountry } from '../../../shared/domain/charts';
import { postIncomingInvoice, postRefund, PostingError } from '../../../shared/ledger/posting';

// The posting is one statement that looks the accounts up by number and locks them: a missing
// account must fail before anything is written, and an invoice is never posted twice.
it('posting: a missing account writes nothing and names it; a good one posts once, balanced; a refund reverses it', async () => {
  const { tenant, admin } = await createTeam();
  await seedChartOfAccounts(db(), tenant.id, 'AT');
  const supplier = await createSupplier(tenant);
  const actor = { userId: admin.id, tenantId: tenant.id, role: 'admin' as const };
  const { id } = await createInvoice(
    { trx: db(), actor },
    {
      type: 'eingangsrechnung',
      supplierId: supplier.id,
      invoiceNumber: 'ch_1',
      invoiceDate: '2026-11-20',
      items: [{ description: 'Zahlung', quantity: 1, unitPrice: '119.00', taxRate: '0' }],
    },
  );
  const invoice = { id, tenantId: tenant.id, supplierId: supplier.id, invoiceDate: '2026-11-20', totalGross: '119.00', invoiceNumber: 'ch_1' };
  const entries = async () => Number((await db()('journalEntries').where({ tenantId: tenant.id }).count({ n: '*' }))[0].n);
  const post = (settings: { expenseAccount?: string; clearingAccount?: string }) =>
    db().transaction((trx) => postIncomingInvoice(trx, invoice, 'stripe', settings, 'Stripe ch_1'));

  await expect(post({ expenseAccount: '9999' })).rejects.toThrow(new PostingError("Expense account 9999 does not exist in the tenant's chart of accounts"));
  await expect(post({ clearingAccount: '8888' })).rejects.toThrow(new PostingError("Clearing account 8888 does not exist in the tenant's chart of accounts"));
  expect(await entries()).toBe(0);

  const posted = await post({});
  expect(posted).toMatchObject({ amount: '119.00', reversesEntryId: null, expenseSource: 'default' });
  const lines = await db()('journalLines as l')
    .join('ledgerAccounts as a', 'a.id', 'l.accountId')
    .where({ 'l.entryId': posted!.entryId })
    .select('a.number', 'l.debit', 'l.credit');
  expect(lines).toEqual(
    expect.arrayContaining([
      { number: posted!.debitAccount, debit: '119.00', credit: '0.00' },
      { number: posted!.creditAccount, debit: '0.00', credit: '119.00' },
    ]),
  );
  expect(await post({})).toBeNull(); // posted already: never twice
  expect(await entries()).toBe(1);

  // A partial refund reverses the original's accounts, sides swapped.
  const { id: refundId } = await createInvoice(
    { trx: db(), actor },
    {
      type: 'eingangsrechnung',
      supplierId: supplier.id,
      invoiceNumber: 're_1',
      invoiceDate: '2026-11-21',
      items: [{ description: 'Erstattung', quantity: 1, unitPrice: '-19.00', taxRate: '0' }],
    },
    { allowNegative: true },
  );
  const reversed = await db().transaction((trx) =>
    postRefund(
      trx,
      {
        id: refundId,
        tenantId: tenant.id,
        supplierId: supplier.id,
        invoiceDate: '2026-11-21',
        totalGross: '-19.00',
        invoiceNumber: 're_1',
        relatedInvoiceId: id,
      },
      'stripe',
      {},
      'Stripe re_1',
    ),
  );
  expect(reversed).toMatchObject({
    amount: '19.00',
    reversesEntryId: posted!.entryId,
    debitAccount: posted!.creditAccount,
    creditAccount: posted!.debitAccount,
    expenseSource: 'original',
  });
  expect(await entries()).toBe(2);
});

// The accounts are decided inside the posting statement; a tenant without a chart of accounts yet
// gets it seeded and posted in the same call, and a refund without an original entry books the
// payment's accounts with the sides swapped.
it('posting: a tenant without a chart gets it seeded; a refund without an original reverses the decided accounts', async () => {
  const { tenant, admin } = await createTeam();
  expect(await db()('ledgerAccounts').where({ tenantId: tenant.id })).toHaveLength(0);
  const supplier = await createSupplier(tenant);
  const actor = { userId: admin.id, tenantId: tenant.id, role: 'admin' as const };
  const make = async (number: string, price: string) =>
    (
      await createInvoice(
        { trx: db(), actor },
        {
          type: 'eingangsrechnung',
          supplierId: supplier.id,
          invoiceNumber: number,
          invoiceDate: '2026-11-20',
          items: [{ description: 'Zahlung', quantity: 1, unitPrice: price, taxRate: '0' }],
        },
        { allowNegative: true },
      )
    ).id;
  const chart = chartForCountry(tenant.country);

  const paymentId = await make('pay_1', '50.00');
  const posted = await db().transaction((trx) =>
    postIncomingInvoice(
      trx,
      { id: paymentId, tenantId: tenant.id, supplierId: supplier.id, invoiceDate: '2026-11-20', totalGross: '50.00', invoiceNumber: 'pay_1' },
      'paypal',
      {},
      'PayPal pay_1',
    ),
  );
  expect(posted).toMatchObject({ debitAccount: chart.defaultExpense, creditAccount: chart.clearing.paypal, amount: '50.00', expenseSource: 'default' });
  expect((await db()('ledgerAccounts').where({ tenantId: tenant.id })).length).toBeGreaterThan(10);

  // The second posting of this supplier finds its history (the default expense account, once).
  const refundId = await make('ref_1', '-20.00');
  const reversed = await db().transaction((trx) =>
    postRefund(
      trx,
      {
        id: refundId,
        tenantId: tenant.id,
        supplierId: supplier.id,
        invoiceDate: '2026-11-21',
        totalGross: '-20.00',
        invoiceNumber: 'ref_1',
        relatedInvoiceId: null,
      },
      'paypal',
      {},
      'PayPal ref_1',
    ),
  );
  expect(reversed).toMatchObject({
    debitAccount: chart.clearing.paypal,
    creditAccount: chart.defaultExpense,
    amount: '20.00',
    reversesEntryId: null,
    expenseSource: 'history',
  });
  await expect(
    db().transaction((trx) =>
      postRefund(
        trx,
        { id: refundId, tenantId: tenant.id, supplierId: supplier.id, invoiceDate: '2026-11-21', totalGross: '-20.00', invoiceNumber: 'ref_1' },
        'paypal',
        { clearingAccount: '7777' },
        'PayPal ref_1',
      ),
    ),
  ).rejects.toThrow(new PostingError("Clearing account 7777 does not exist in the tenant's chart of accounts"));
});

// Step 3 of the expense account (docs/ledger.md): the account most used on the supplier's earlier
// postings, a tie to the most recent, reversals not counted. The counts are kept by a trigger on
// journal_lines (supplier_expense_usage); they must equal the aggregate over the ledger itself.
it('posting: the supplier history picks the most used expense account, a tie the most recent; reversals do not count', async () => {
  const { tenant, admin } = await createTeam();
  await seedChartOfAccounts(db(), tenant.id, 'AT');
  const supplier = await createSupplier(tenant);
  const other = await createSupplier(tenant);
  const actor = { userId: admin.id, tenantId: tenant.id, role: 'admin' as const };
  let n = 0;
  const post = async (expenseAccount: string | null, of = supplier.id) => {
    const number = `ch_${++n}`;
    const { id } = await createInvoice(
      { trx: db(), actor },
      {
        type: 'eingangsrechnung',
        supplierId: of,
        invoiceNumber: number,
        invoiceDate: '2026-11-20',
        items: [{ description: 'Zahlung', quantity: 1, unitPrice: '10.00', taxRate: '0' }],
      },
    );
    const posted = await db().transaction((trx) =>
      postIncomingInvoice(
        trx,
        { id, tenantId: tenant.id, supplierId: of, invoiceDate: '2026-11-20', totalGross: '10.00', invoiceNumber: number },
        'stripe',
        expenseAccount ? { expenseAccount } : {},
        `Stripe ${number}`,
      ),
    );
    return { id, ...posted! };
  };

  await post('5800');
  const second = await post('5800');
  await post('7380');
  await post('7200', other.id); // another supplier's history is not this one's
  expect(await post(null)).toMatchObject({ debitAccount: '5800', expenseSource: 'history' }); // 5800 ×3, 7380 ×1

  await post('7380');
  await post('7380'); // 3 : 3, 7380 the most recent
  expect(await post(null)).toMatchObject({ debitAccount: '7380', expenseSource: 'history' }); // 7380 ×4

  // Reversing two 5800 entries does not take them off the count (nor add to 7380's).
  for (const original of [second, second]) {
    const number = `re_${++n}`;
    const { id } = await createInvoice(
      { trx: db(), actor },
      {
        type: 'eingangsrechnung',
        supplierId: supplier.id,
        invoiceNumber: number,
        invoiceDate: '2026-11-21',
        items: [{ description: 'Erstattung', quantity: 1, unitPrice: '-1.00', taxRate: '0' }],
      },
      { allowNegative: true },
    );
    await db().transaction((trx) =>
      postRefund(
        trx,
        {
          id,
          tenantId: tenant.id,
          supplierId: supplier.id,
          invoiceDate: '2026-11-21',
          totalGross: '-1.00',
          invoiceNumber: number,
          relatedInvoiceId: original.id,
        },
        'stripe',
        {},
        `Stripe ${number}`,
      ),
    );
  }
  await post('5800'); // 4 : 4, 5800 the most recent
  expect(await post(null)).toMatchObject({ debitAccount: '5800', expenseSource: 'history' });

  const counts = await db()('supplierExpenseUsage')
    .where({ tenantId: tenant.id })
    .orderBy(['supplierId', 'accountNumber'])
    .select('supplierId', 'accountNumber', 'uses', 'lastUsedAt');
  const { rows: ledger } = await db().raw(
    `select i.supplier_id as "supplierId", a.number as "accountNumber", count(*)::int as uses, max(je.created_at) as "lastUsedAt"
       from journal_entries je
       join invoices i on i.tenant_id = je.tenant_id and i.id = je.source_id
       join journal_lines jl on jl.tenant_id = je.tenant_id and jl.entry_id = je.id and jl.debit > 0
       join ledger_accounts a on a.tenant_id = je.tenant_id and a.id = jl.account_id and a.kind = 'expense'
      where je.tenant_id = ? and je.source_type = 'invoice' and je.reverses_entry_id is null
      group by i.supplier_id, a.number order by 1, 2`,
    [tenant.id],
  );
  expect(counts).toEqual(ledger);
  expect(counts.filter((c) => c.supplierId === supplier.id).map((c) => [c.accountNumber, c.uses])).toEqual([
    ['5800', 5],
    ['7380', 4],
  ]);

  // The supplier's own default expense account beats the history, when the chart has it.
  await db()('suppliers').where({ id: supplier.id }).update({ defaultExpenseAccount: '9999' });
  expect(await post(null)).toMatchObject({ debitAccount: '5800', expenseSource: 'history' });
  await db()('suppliers').where({ id: supplier.id }).update({ defaultExpenseAccount: '7400' });
  expect(await post(null)).toMatchObject({ debitAccount: '7400', expenseSource: 'supplier' });
});
