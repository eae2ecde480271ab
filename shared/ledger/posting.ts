import type { Knex } from 'knex';
import { runCompiledSql } from '../db';
import { toEur } from '../domain/exchangeRates';
import { dec, fmtMoney, roundMoney } from '../domain/money';
import type { ProviderSlug } from '../providers/payments/types';
import { seedChartOfAccounts, tenantChart } from './accounts';
import { CHARTS } from '../domain/charts';
import { Invoice } from '../models/Invoice';
import { JournalEntry } from '../models/JournalEntry';

/**
 * Posting incoming invoices to the general ledger (docs/ledger.md). Double entry is enforced by
 * the database (a deferred trigger rejects an unbalanced entry at commit) and "once per invoice"
 * by the unique (tenant_id, source_type, source_id) on journal_entries.
 */
export const INVOICE_SOURCE = 'invoice';
/**
 * The reversal of a cancelled incoming invoice's entry: source_id is the invoice as for its entry,
 * so the unique (tenant_id, source_type, source_id) lets it be reversed once, never twice.
 */
export const CANCELLATION_SOURCE = 'invoice_cancellation';
/**
 * The VAT a purchase under reverse charge or an intra-Community acquisition owes (and, unless the
 * tenant is a small business, deducts): its own entry beside the invoice's, so the invoice's entry
 * stays one debit and one credit line (reversalOf) and the expense history counts only it.
 */
export const PURCHASE_TAX_SOURCE = 'invoice_purchase_tax';
export const PURCHASE_TAX_CANCELLATION_SOURCE = 'invoice_purchase_tax_cancellation';

export class PostingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PostingError';
  }
}

export interface PostingSettings {
  expenseAccount?: string | null;
  clearingAccount?: string | null;
}

export interface PostedEntry {
  entryId: string;
  debitAccount: string;
  creditAccount: string;
  amount: string;
  reversesEntryId: string | null;
  /** How the expense account was chosen: settings, supplier, history, chart default, or the original entry (refunds). */
  expenseSource: 'settings' | 'supplier' | 'history' | 'default' | 'original';
  /** The VAT entry of lines under reverse charge / intra-Community acquisition, when the invoice has such lines. */
  purchaseTax?: PurchaseTaxEntry;
}

export interface PurchaseTaxEntry {
  entryId: string;
  lines: { account: string; debit: string; credit: string }[];
}

export interface InvoiceToPost {
  id: string;
  tenantId: string;
  supplierId: string;
  invoiceDate: string;
  /** In the ledger's currency (EUR): converted by the caller at `exchangeRate`. */
  totalGross: string;
  invoiceNumber: string;
  relatedInvoiceId?: string | null;
  /** The document's ECB rate (units per EUR) when it is in another currency: its lines' amounts are converted with it. */
  exchangeRate?: string | null;
  /**
   * True when the caller knows none of the invoice's lines owes purchase tax (owesPurchaseTax: it
   * has just written them), so the posting need not read them back: a round trip per webhook event.
   */
  noPurchaseTaxLines?: boolean;
}

/**
 * What the entry credits: a payment provider's clearing account (a webhook's payment notice, paid
 * already), or `payables` for an imported e-invoice, which arrives unpaid. Only an invoice entitles
 * to input-tax deduction (a payment notice is booked at 0 %), so only `payables` posts Vorsteuer.
 */
export type CreditRole = ProviderSlug | 'payables';

/** A piece of SQL with its `?` bindings, to be placed inside a larger statement. */
interface SqlFragment {
  sql: string;
  bindings: Knex.RawBinding[];
}

/**
 * The expense account most used on the supplier's earlier posted incoming invoices (debit side,
 * reversals excluded; ties to the most recent, then the account number, so the pick is stable), as
 * one-column SQL for the posting statement. Read from supplier_expense_usage, counts a trigger
 * keeps (docs/ledger.md, "Posting rules").
 */
function expenseHistorySql(tenantId: string, supplierId: string): SqlFragment {
  return {
    sql: `select u.account_number from supplier_expense_usage u
           where u.tenant_id = ? and u.supplier_id = ?
           order by u.uses desc, u.last_used_at desc, u.account_number
           limit 1`,
    bindings: [tenantId, supplierId],
  };
}

/** Each chart's fallback accounts, as JSON for the posting statement to pick from by the tenant's chart. */
export const CHART_FALLBACKS = JSON.stringify(
  Object.fromEntries(
    Object.entries(CHARTS).map(([name, c]) => [name, { defaultExpense: c.defaultExpense, clearing: { ...c.clearing, payables: c.payables } }]),
  ),
);

/** Which accounts an entry books, as SQL for postEntry's first CTE: one row (debit, credit, source, chart). */
type AccountPick = SqlFragment;

/** Accounts the caller knows already (a refund reversing its original's entry). */
const knownAccounts = (debit: string, credit: string): AccountPick => ({
  sql: `select cast(? as text) as debit, cast(? as text) as credit, cast('original' as text) as source, cast(null as text) as chart`,
  bindings: [debit, credit],
});

/**
 * The accounts decided in the posting statement itself: expense from the connector's settings,
 * else the supplier's default if in the chart, else the supplier's history (asked only when neither
 * decides), else the chart's default; clearing from the settings, else the chart's for the
 * provider. `reversed` books the clearing account on the debit side (a refund without an original).
 * For `payables` (an imported e-invoice) the setting is the tenant's fallback for every supplier,
 * so the supplier's default and history come first, and the credit is the chart's payables.
 */
function decidedAccounts(tenantId: string, supplierId: string, provider: CreditRole, settings: PostingSettings, reversed: boolean): AccountPick {
  const [expenseSide, clearingSide] = reversed ? ['credit', 'debit'] : ['debit', 'credit'];
  const settingsExpense = settings.expenseAccount || null;
  const settingsFirst = provider !== 'payables';
  const history = expenseHistorySql(tenantId, supplierId);
  const expense = settingsFirst
    ? `coalesce(cast(? as text), x.supplier_default, x.history, cast(? as jsonb) -> x.chart ->> 'defaultExpense')`
    : `coalesce(x.supplier_default, x.history, cast(? as text), cast(? as jsonb) -> x.chart ->> 'defaultExpense')`;
  const source = settingsFirst
    ? `case when ? then 'settings' when x.supplier_default is not null then 'supplier' when x.history is not null then 'history' else 'default' end`
    : `case when x.supplier_default is not null then 'supplier' when x.history is not null then 'history' when ? then 'settings' else 'default' end`;
  // `offset 0` keeps x a subquery of its own: flattened, each of its subqueries would be copied to
  // (and run at) every place x's columns are used. The supplier is read by its key alone (its own
  // `offset 0`): with the tenant as a second condition the generic plan made on fresh statistics
  // went through a tenant index and read all of the tenant's suppliers.
  return {
    sql: `select ${expense} as ${expenseSide},
                 coalesce(cast(? as text), cast(? as jsonb) -> x.chart -> 'clearing' ->> cast(? as text)) as ${clearingSide},
                 ${source} as source,
                 x.chart
            from (select c.chart, c.supplier_default, case when c.supplier_default is null and not ? then (${history.sql}) end as history
                    from (select (select chart from ledger_accounts where tenant_id = ? limit 1) as chart,
                                 (select a.number from (select tenant_id, default_expense_account from suppliers where id = ? offset 0) s
                                    join ledger_accounts a on a.tenant_id = s.tenant_id and a.number = s.default_expense_account
                                   where s.tenant_id = ?) as supplier_default
                          offset 0) c
                  offset 0) x`,
    bindings: [
      settingsExpense,
      CHART_FALLBACKS,
      settings.clearingAccount || null,
      CHART_FALLBACKS,
      provider,
      !!settingsExpense,
      settingsFirst && !!settingsExpense,
      ...history.bindings,
      tenantId,
      supplierId,
      tenantId,
    ],
  };
}

interface EntryOutcome {
  /** The entry's id; null when the source was posted already (never twice). */
  id: string | null;
  debit: string;
  credit: string;
  source: PostedEntry['expenseSource'];
}

/**
 * The entry and its two lines in one statement, with the accounts picked (AccountPick) and looked
 * up by number in it and locked FOR SHARE (they cannot be deleted or renumbered while the entry
 * commits). A missing account writes nothing and fails with the first missing one, debit before
 * credit; a source that is posted already writes nothing and gives id null: never twice. A tenant
 * without a chart of accounts yet gets it seeded (tenantChart) and the statement runs again.
 * Hot (once per auto-posted event): compiled SQL, not the JournalEntry model.
 */
async function postEntry(
  trx: Knex.Transaction,
  e: { tenantId: string; date: string; description: string; sourceId: string; reversesEntryId: string | null; sourceType?: string },
  pick: AccountPick,
  what: { debit: string; credit: string },
  amount: string | { debit: string; credit: string },
): Promise<EntryOutcome> {
  // Different amounts only with input-tax lines the caller adds to the entry in the same transaction (the balance is checked at commit).
  const { debit: debitAmount, credit: creditAmount } = typeof amount === 'string' ? { debit: amount, credit: amount } : amount;
  const text = `with pick as (${pick.sql}
       ), acc as (
         select id, number from ledger_accounts where tenant_id = ? and number in ((select debit from pick), (select credit from pick)) for share
       ), complete as (
         select count(*) = (select count(distinct n) from (select debit from pick union all select credit from pick) x(n))
                and (select debit is not null and credit is not null from pick) as ok
           from acc
       ), e as (
         insert into journal_entries (tenant_id, date, description, source_type, source_id, reverses_entry_id)
         select cast(? as uuid), cast(? as date), cast(? as text), cast(? as text), cast(? as uuid), cast(? as uuid)
          where (select ok from complete)
         on conflict (tenant_id, source_type, source_id) do nothing
         returning id
       ), l as (
         insert into journal_lines (tenant_id, entry_id, account_id, debit, credit)
         select cast(? as uuid), e.id, acc.id, x.debit, x.credit
           from e cross join pick
           cross join lateral (values (pick.debit, cast(? as numeric), cast(? as numeric)), (pick.credit, cast(? as numeric), cast(? as numeric))) as x(number, debit, credit)
           join acc on acc.number = x.number
       )
       select (select ok from complete) as "complete", (select id from e) as "id", (select coalesce(json_agg(number), '[]') from acc) as "found",
              pick.debit, pick.credit, pick.source, pick.chart
         from pick`;
  const bindings = [
    ...pick.bindings,
    e.tenantId,
    e.tenantId,
    e.date,
    e.description.slice(0, 500),
    e.sourceType ?? INVOICE_SOURCE,
    e.sourceId,
    e.reversesEntryId,
    e.tenantId,
    debitAmount,
    '0.00',
    '0.00',
    creditAmount,
  ];
  // Three texts (forward, reversed, an original's accounts), each compiled once.
  type Row = {
    complete: boolean;
    id: string | null;
    found: string[];
    debit: string | null;
    credit: string | null;
    source: PostedEntry['expenseSource'];
    chart: string | null;
  };
  const run = () => runCompiledSql<Row>(trx, text, bindings);
  let [r] = await run();
  if (!r.id && r.source !== 'original' && !(r.chart && r.chart in CHARTS)) {
    // No chart yet (nothing was written: no account matched): seed it, then post.
    await tenantChart(trx, e.tenantId);
    [r] = await run();
  }
  if (!r.complete) {
    const missing = (['debit', 'credit'] as const).find((side) => !r[side] || !r.found.includes(r[side]!))!;
    throw new PostingError(`${what[missing]} ${r[missing] ?? '(none)'} does not exist in the tenant's chart of accounts`);
  }
  return { id: r.id, debit: r.debit!, credit: r.credit!, source: r.source };
}

/**
 * Post an incoming invoice: debit the expense account, credit the provider's clearing account or,
 * for an imported e-invoice, payables (decidedAccounts); an e-invoice's deductible input tax is
 * debited per rate in the same entry and the expense carries the rest. Returns null when the
 * invoice already has its entry.
 */
export async function postIncomingInvoice(
  trx: Knex.Transaction,
  invoice: InvoiceToPost,
  provider: CreditRole,
  settings: PostingSettings,
  description: string,
): Promise<PostedEntry | null> {
  const amount = fmtMoney(dec(invoice.totalGross).abs());
  const tax = provider === 'payables' ? await deductibleInputTax(trx, invoice, 'debit') : null;
  const posted = await postEntry(
    trx,
    { tenantId: invoice.tenantId, date: invoice.invoiceDate, description, sourceId: invoice.id, reversesEntryId: null },
    decidedAccounts(invoice.tenantId, invoice.supplierId, provider, settings, false),
    { debit: 'Expense account', credit: provider === 'payables' ? 'Payables account' : 'Clearing account' },
    tax ? { debit: tax.rest(amount), credit: amount } : amount,
  );
  if (!posted.id) return null;
  if (tax) await tax.insert(posted.id);
  const purchaseTax = await postPurchaseTax(trx, invoice, posted.debit, description);
  return {
    entryId: posted.id,
    debitAccount: posted.debit,
    creditAccount: posted.credit,
    amount,
    reversesEntryId: null,
    expenseSource: posted.source,
    ...(purchaseTax ? { purchaseTax } : {}),
  };
}

/**
 * Post a refund (negative incoming invoice) as the reversal of the original payment's entry: the
 * original's accounts with sides swapped, for the refund's own amount (a partial refund reverses
 * part of it). Without an original entry (original not found or never posted) it reverses what a
 * posting of the payment would have used.
 */
export async function postRefund(
  trx: Knex.Transaction,
  refund: InvoiceToPost,
  provider: CreditRole,
  settings: PostingSettings,
  description: string,
): Promise<PostedEntry | null> {
  const amount = fmtMoney(dec(refund.totalGross).abs());
  if (refund.relatedInvoiceId) {
    // A cancelled payment is void and its entry reversed in full already (postCancellationReversal):
    // reversing it again for the refund would book the expense below zero. The refund stays
    // unposted with the reason on its log row; the user books it against the replacing document.
    const related = await Invoice.query(trx).where({ tenantId: refund.tenantId, id: refund.relatedInvoiceId }).select('status', 'totalGross').first();
    if (related?.status === 'storniert') {
      throw new PostingError(`the refunded payment's invoice ${refund.relatedInvoiceId} was cancelled (void, its entry reversed): post this refund by hand`);
    }
    // No provider refunds more than was paid; should one report it, reversing more than the payment's
    // entry would take the expense account below zero. The refund document stands, unposted.
    if (related) {
      const [{ refunded }] = await trx('invoices')
        .where({ tenantId: refund.tenantId, relatedInvoiceId: refund.relatedInvoiceId, type: 'eingangsrechnung' })
        .whereNot({ id: refund.id })
        .whereNot({ status: 'storniert' })
        .where('totalGross', '<', 0)
        .sum({ refunded: 'totalGross' });
      const total = dec(refunded ?? '0')
        .abs()
        .plus(amount);
      if (total.greaterThan(dec(related.totalGross))) {
        throw new PostingError(
          `the refunds of ${refund.relatedInvoiceId} (${fmtMoney(total)}) would exceed its payment of ${fmtMoney(dec(related.totalGross))}: post this refund by hand`,
        );
      }
    }
  }
  const original = refund.relatedInvoiceId
    ? await JournalEntry.query(trx).where({ tenantId: refund.tenantId, sourceType: INVOICE_SOURCE, sourceId: refund.relatedInvoiceId }).first()
    : undefined;
  const pick: AccountPick = original
    ? (await reversalOf(trx, refund.tenantId, original.id)).pick
    : decidedAccounts(refund.tenantId, refund.supplierId, provider, settings, true);
  // A credit note to an e-invoice corrects its input tax too: credited per rate, its own figures.
  const tax = provider === 'payables' ? await deductibleInputTax(trx, refund, 'credit') : null;
  const posted = await postEntry(
    trx,
    { tenantId: refund.tenantId, date: refund.invoiceDate, description, sourceId: refund.id, reversesEntryId: original?.id ?? null },
    pick,
    { debit: provider === 'payables' ? 'Payables account' : 'Clearing account', credit: 'Expense account' },
    tax ? { debit: amount, credit: tax.rest(amount) } : amount,
  );
  if (!posted.id) return null;
  if (tax) await tax.insert(posted.id);
  const purchaseTax = await postPurchaseTax(trx, refund, posted.credit, description);
  return {
    entryId: posted.id,
    debitAccount: posted.debit,
    creditAccount: posted.credit,
    amount,
    reversesEntryId: original?.id ?? null,
    expenseSource: posted.source,
    ...(purchaseTax ? { purchaseTax } : {}),
  };
}

/**
 * The reversal of a cancelled incoming invoice's entry (cancelInvoice, same transaction): the
 * original's accounts swapped, full amount, linked by reverses_entry_id, dated like the original
 * so the ledger nets to zero in the period where the reports drop the invoice (docs/reports.md).
 * Null when the invoice was never posted or is reversed already.
 */
export async function postCancellationReversal(trx: Knex.Transaction, tenantId: string, invoiceId: string): Promise<PostedEntry | null> {
  const original = await JournalEntry.query(trx).where({ tenantId, sourceType: INVOICE_SOURCE, sourceId: invoiceId }).first();
  if (!original) return null;
  const { pick, amount, lines } = await reversalOf(trx, tenantId, original.id);
  if (lines.length > 2) {
    // An e-invoice's entry (expense, input tax, payables): every line's sides swapped.
    const entryId = await insertEntry(
      trx,
      {
        tenantId,
        date: original.date,
        description: `Storno: ${original.description}`,
        sourceType: CANCELLATION_SOURCE,
        sourceId: invoiceId,
        reversesEntryId: original.id,
      },
      lines.map((l) => ({ account: l.number, debit: fmtMoney(l.credit), credit: fmtMoney(l.debit) })),
    );
    if (!entryId) return null;
    await reversePurchaseTax(trx, tenantId, invoiceId);
    return {
      entryId,
      debitAccount: pick.bindings[0] as string,
      creditAccount: pick.bindings[1] as string,
      amount,
      reversesEntryId: original.id,
      expenseSource: 'original',
    };
  }
  const posted = await postEntry(
    trx,
    {
      tenantId,
      date: original.date,
      description: `Storno: ${original.description}`,
      sourceId: invoiceId,
      reversesEntryId: original.id,
      sourceType: CANCELLATION_SOURCE,
    },
    pick,
    { debit: 'Account', credit: 'Account' },
    amount,
  );
  if (!posted.id) return null;
  await reversePurchaseTax(trx, tenantId, invoiceId);
  return { entryId: posted.id, debitAccount: posted.debit, creditAccount: posted.credit, amount, reversesEntryId: original.id, expenseSource: 'original' };
}

/**
 * The accounts that reverse an invoice's entry (its debit and credit accounts swapped) and its
 * amount: one lookup for a refund reversing its payment and a cancellation reversing its invoice.
 * The entries the service posts for invoices are one debit and one credit line, or, for an
 * imported e-invoice, those two plus its input-tax lines (the chart's input-tax accounts), which
 * the pick leaves out and `lines` keeps for a full reversal.
 */
async function reversalOf(
  trx: Knex.Transaction,
  tenantId: string,
  entryId: string,
): Promise<{ pick: AccountPick; amount: string; lines: { number: string; debit: string; credit: string }[] }> {
  const lines: { number: string; debit: string; credit: string }[] = await trx('journalLines as jl')
    .join('ledgerAccounts as a', 'a.id', 'jl.accountId')
    .where({ 'jl.entryId': entryId, 'jl.tenantId': tenantId })
    .select('a.number', 'jl.debit', 'jl.credit');
  let main = lines;
  if (lines.length > 2) {
    const chart = await tenantChart(trx, tenantId);
    const inputTax = new Set([...Object.values(chart.inputTax.byRate), chart.inputTax.other]);
    main = lines.filter((l) => !inputTax.has(l.number));
  }
  const debited = main.find((l) => dec(l.debit).greaterThan(0));
  const credited = main.find((l) => dec(l.credit).greaterThan(0));
  if (!debited || !credited || main.length !== 2) throw new PostingError(`Original entry ${entryId} is not one debit and one credit line`);
  return { pick: knownAccounts(credited.number, debited.number), amount: fmtMoney(dec(credited.credit)), lines };
}

/**
 * An imported e-invoice's deductible input tax (docs/ledger.md, "Imported e-invoices"): its lines'
 * VAT per rate, in EUR at the invoice's rate, on the chart's input-tax account of the rate.
 * Foreign VAT (`foreignVat`) is not deductible and stays in the expense, as in DATEV and BWA; a
 * small-business tenant deducts nothing. Accounts are checked (and locked FOR SHARE) before the
 * entry is written, so a missing one is a PostingError with nothing written. `rest` is what the
 * expense line carries of the gross; `insert` adds the lines to the entry (`side` for a positive
 * tax: debit on an invoice, credit on a credit note).
 */
async function deductibleInputTax(trx: Knex.Transaction, invoice: InvoiceToPost, side: 'debit' | 'credit') {
  const rows: { rate: string; tax: string }[] = await trx('invoiceItems')
    .where({ tenantId: invoice.tenantId, invoiceId: invoice.id })
    .where('taxRate', '>', 0)
    .where((q) => q.whereNull('taxCategory').orWhereNot('taxCategory', 'foreignVat'))
    .groupBy('taxRate')
    .orderBy('taxRate', 'desc')
    .select(trx.raw('tax_rate::text as rate'), trx.raw('sum(tax_amount)::text as tax'));
  const tenant = await trx('tenants').where({ id: invoice.tenantId }).first('settings');
  const chart = await tenantChart(trx, invoice.tenantId);
  const lines: { account: string; tax: ReturnType<typeof dec> }[] = [];
  if (tenant?.settings?.smallBusiness !== true) {
    for (const r of rows) {
      // The document's sign: an invoice's tax is positive, a credit note's negative (abs below).
      const signed = invoice.exchangeRate ? dec(toEur(r.tax, invoice.exchangeRate)) : dec(r.tax);
      const tax = dec(invoice.totalGross).isNegative() ? signed.negated() : signed;
      if (tax.isZero()) continue;
      const rate = dec(r.rate).toFixed();
      lines.push({ account: chart.inputTax.byRate[rate] ?? chart.inputTax.other, tax });
    }
  }
  if (!lines.length) return null;
  // A ledger seeded before these accounts existed gets them now (idempotent; the chart is kept).
  await seedChartOfAccounts(trx, invoice.tenantId, null);
  const numbers = [...new Set(lines.map((l) => l.account))];
  const found: { id: string; number: string }[] = await trx('ledgerAccounts')
    .where({ tenantId: invoice.tenantId })
    .whereIn('number', numbers)
    .forShare()
    .select('id', 'number');
  const missing = numbers.find((n) => !found.some((a) => a.number === n));
  if (missing) throw new PostingError(`Input tax account ${missing} does not exist in the tenant's chart of accounts`);
  const total = lines.reduce((a, l) => a.plus(l.tax), dec(0));
  return {
    rest: (gross: string) => {
      const rest = dec(gross).minus(total);
      // Lines are one-sided and non-negative: an expense below zero is no posting to guess at.
      if (rest.isNegative()) throw new PostingError(`the input tax ${fmtMoney(total)} exceeds the gross ${gross}: post this invoice by hand`);
      return fmtMoney(rest);
    },
    insert: async (entryId: string) => {
      await trx('journalLines').insert(
        lines.map((l) => {
          const amount = fmtMoney(l.tax.abs());
          const onSide = l.tax.isNegative() ? (side === 'debit' ? 'credit' : 'debit') : side;
          return {
            tenantId: invoice.tenantId,
            entryId,
            accountId: found.find((a) => a.number === l.account)!.id,
            debit: onSide === 'debit' ? amount : '0.00',
            credit: onSide === 'credit' ? amount : '0.00',
          };
        }),
      );
    },
  };
}

type PurchaseKind = 'reverseCharge' | 'intraCommunityAcquisition';
/** The stored line category of a purchase → which owed tax it is. */
const PURCHASE_KIND: Record<string, PurchaseKind> = { reverseCharge: 'reverseCharge', intraCommunitySupply: 'intraCommunityAcquisition' };

/** Whether a line of this tax category owes the buyer's purchase tax (postPurchaseTax), at rate 0. */
export const owesPurchaseTax = (taxCategory: string | null | undefined): boolean => !!taxCategory && Object.hasOwn(PURCHASE_KIND, taxCategory);

/**
 * Post the VAT the buyer owes on the invoice's 0 % lines under reverse charge (a service from a
 * business in another member state) or intra-Community acquisition (docs/ledger.md, "Reverse
 * charge and intra-Community acquisitions"): per kind, the net at the chart's standard rate, owed
 * on the output-tax account and deducted on the input-tax account; a small-business tenant may not
 * deduct it, so the tax is a cost on the invoice's expense account. A negative net (a refund)
 * swaps the sides. Null when the invoice has no such lines or the entry exists already.
 */
async function postPurchaseTax(
  trx: Knex.Transaction,
  invoice: Pick<InvoiceToPost, 'id' | 'tenantId' | 'invoiceDate' | 'exchangeRate' | 'noPurchaseTaxLines'>,
  expenseAccount: string,
  description: string,
): Promise<PurchaseTaxEntry | null> {
  if (invoice.noPurchaseTaxLines) return null;
  // Small reads (the invoice's lines, the tenant's setting), run only for documents being posted.
  const nets: { category: string; net: string }[] = await trx('invoiceItems')
    .where({ tenantId: invoice.tenantId, invoiceId: invoice.id, taxRate: 0 })
    .whereIn('taxCategory', Object.keys(PURCHASE_KIND))
    .groupBy('taxCategory')
    .select('taxCategory as category', trx.raw('sum(net_amount)::text as net'));
  if (!nets.length) return null;
  const chart = await tenantChart(trx, invoice.tenantId);
  const tenant = await trx('tenants').where({ id: invoice.tenantId }).first('settings');
  const smallBusiness = tenant?.settings?.smallBusiness === true;
  const rate = dec(chart.standardRate).dividedBy(100);
  const lines: { account: string; debit: string; credit: string }[] = [];
  const texts: string[] = [];
  for (const { category, net: documentNet } of nets) {
    const kind = PURCHASE_KIND[category];
    // The ledger is in EUR: a document in another currency (an imported e-invoice) converts at its rate.
    const net = invoice.exchangeRate ? toEur(documentNet, invoice.exchangeRate) : documentNet;
    const tax = roundMoney(dec(net).times(rate));
    if (tax.isZero()) continue;
    const accounts = chart.purchaseTax[kind];
    const amount = fmtMoney(tax.abs());
    const owedSide = tax.isNegative() ? 'debit' : 'credit';
    const deductSide = owedSide === 'credit' ? 'debit' : 'credit';
    const line = (account: string, side: 'debit' | 'credit') => ({
      account,
      debit: side === 'debit' ? amount : '0.00',
      credit: side === 'credit' ? amount : '0.00',
    });
    lines.push(line(smallBusiness ? expenseAccount : accounts.inputTax, deductSide), line(accounts.outputTax, owedSide));
    texts.push(`${kind === 'reverseCharge' ? 'Reverse Charge' : 'ig. Erwerb'} ${chart.standardRate} % auf ${fmtMoney(net)}`);
  }
  if (!lines.length) return null;
  // A ledger seeded before these accounts existed gets them now (idempotent; the chart is kept).
  await seedChartOfAccounts(trx, invoice.tenantId, null);
  const entryId = await insertEntry(
    trx,
    {
      tenantId: invoice.tenantId,
      date: invoice.invoiceDate,
      description: `${description} – ${texts.join(', ')}`,
      sourceType: PURCHASE_TAX_SOURCE,
      sourceId: invoice.id,
      reversesEntryId: null,
    },
    lines,
  );
  return entryId ? { entryId, lines } : null;
}

/** The reversal of a cancelled invoice's purchase-tax entry: every line's sides swapped, the original's date. */
async function reversePurchaseTax(trx: Knex.Transaction, tenantId: string, invoiceId: string): Promise<void> {
  const original = await JournalEntry.query(trx).where({ tenantId, sourceType: PURCHASE_TAX_SOURCE, sourceId: invoiceId }).first();
  if (!original) return;
  const lines: { number: string; debit: string; credit: string }[] = await trx('journalLines as jl')
    .join('ledgerAccounts as a', 'a.id', 'jl.accountId')
    .where({ 'jl.entryId': original.id, 'jl.tenantId': tenantId })
    .select('a.number', 'jl.debit', 'jl.credit');
  await insertEntry(
    trx,
    {
      tenantId,
      date: original.date,
      description: `Storno: ${original.description}`,
      sourceType: PURCHASE_TAX_CANCELLATION_SOURCE,
      sourceId: invoiceId,
      reversesEntryId: original.id,
    },
    lines.map((l) => ({ account: l.number, debit: fmtMoney(l.credit), credit: fmtMoney(l.debit) })),
  );
}

/**
 * An entry of any number of lines, accounts by number (locked FOR SHARE like postEntry's). Once
 * per source: null when it exists already. A missing account fails before writing.
 * Query builder, not compiled SQL: posted only for the rare invoices with such lines, and for
 * bank-statement payments (bankPostings.ts).
 */
export async function insertEntry(
  trx: Knex.Transaction,
  e: { tenantId: string; date: string; description: string; sourceType: string; sourceId: string; reversesEntryId: string | null },
  lines: { account: string; debit: string; credit: string }[],
): Promise<string | null> {
  const numbers = [...new Set(lines.map((l) => l.account))];
  const found: { id: string; number: string }[] = await trx('ledgerAccounts')
    .where({ tenantId: e.tenantId })
    .whereIn('number', numbers)
    .forShare()
    .select('id', 'number');
  const missing = numbers.find((n) => !found.some((a) => a.number === n));
  // Not a PostingError: the chart was seeded just before, and autoPost turns a PostingError into a
  // warning while the invoice's own entry is already written.
  if (missing) throw new Error(`Account ${missing} does not exist in the tenant's chart of accounts`);
  const [entry] = await trx('journalEntries')
    .insert({ ...e, description: e.description.slice(0, 500) })
    .onConflict(['tenantId', 'sourceType', 'sourceId'])
    .ignore()
    .returning('id');
  if (!entry) return null;
  await trx('journalLines').insert(
    lines.map((l) => ({ tenantId: e.tenantId, entryId: entry.id, accountId: found.find((a) => a.number === l.account)!.id, debit: l.debit, credit: l.credit })),
  );
  return entry.id;
}
