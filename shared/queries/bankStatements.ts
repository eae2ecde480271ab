import type { Knex } from 'knex';
import type { Db } from '../db';
import { notFound } from '../errors';
import type { BankFlag, BankStatementStatus } from '../models/BankStatement';
import type { BankTransactionStatus } from '../models/BankTransaction';
import type { Direction, MatchCandidate, StatementEntry } from '../domain/bankStatements';
import { amountDue } from '../domain/invoiceTotals';
import { pageEnvelope } from './paging';

const iso = (v: Date | string | null) => (v == null ? null : v instanceof Date ? v.toISOString() : String(v));

export interface BankStatementView {
  id: string;
  status: BankStatementStatus;
  format: string | null;
  statementRef: string | null;
  account: string | null;
  accountIban: string | null;
  currency: string | null;
  error: string | null;
  warnings: string[];
  flags: BankFlag[];
  counts: { entries: number; new: number; duplicates: number; matched: number; unmatched: number; ignored: number };
  size: number;
  receivedAt: string;
  processedAt: string | null;
}

/** GET /api/bank-statements/:id: the row without its bytes, and how its new entries stand now. */
export async function getBankStatement(db: Db, tenantId: string, id: string): Promise<BankStatementView> {
  const r = await db('bankStatements')
    .where({ tenantId, id })
    .first(
      'id',
      'status',
      'format',
      'statementRef',
      'account',
      'accountIban',
      'currency',
      'error',
      'warnings',
      'flags',
      'entries',
      'newEntries',
      'duplicates',
      'size',
      'receivedAt',
      'processedAt',
    );
  if (!r) throw notFound('Bank statement');
  const byStatus: { status: BankTransactionStatus; n: number }[] = await db('bankTransactions')
    .where({ tenantId, statementId: id })
    .groupBy('status')
    .select('status', db.raw('count(*)::int as n'));
  const count = (s: BankTransactionStatus) => byStatus.find((b) => b.status === s)?.n ?? 0;
  return {
    id: r.id,
    status: r.status,
    format: r.format,
    statementRef: r.statementRef,
    account: r.account,
    accountIban: r.accountIban,
    currency: r.currency,
    error: r.error,
    warnings: r.warnings ?? [],
    flags: r.flags ?? [],
    counts: {
      entries: r.entries,
      new: r.newEntries,
      duplicates: r.duplicates,
      matched: count('matched'),
      unmatched: count('unmatched'),
      ignored: count('ignored'),
    },
    size: Number(r.size),
    receivedAt: iso(r.receivedAt)!,
    processedAt: iso(r.processedAt),
  };
}

export async function statementForImport(db: Db, tenantId: string, id: string) {
  return db('bankStatements').where({ tenantId, id }).first('id', 'status', 'original');
}

/** A stored entry: what the bank reported (less its booking text) and what matching made of it. */
export interface BankTransactionView extends Omit<StatementEntry, 'bankText'> {
  id: string;
  statementId: string;
  status: BankTransactionStatus;
  account: string;
  flags: BankFlag[];
  note: string | null;
  invoiceId: string | null;
  paymentId: string | null;
  matchedAmount: string | null;
  matchRule: string | null;
}

const TX_COLUMNS = [
  'id',
  'statementId',
  'status',
  'bookingDate',
  'valueDate',
  'amount',
  'direction',
  'currency',
  'reversal',
  'counterpartyName',
  'counterpartyIban',
  'remittance',
  'creditorReference',
  'endToEndId',
  'entryReference',
  'account',
  'flags',
  'note',
  'invoiceId',
  'paymentId',
  'matchedAmount',
  'matchRule',
];

export function toBankTransactionView(r: Record<string, unknown>): BankTransactionView {
  return { ...(r as unknown as BankTransactionView), flags: (r.flags as BankFlag[]) ?? [] };
}

export async function getBankTransaction(db: Db, tenantId: string, id: string): Promise<BankTransactionView> {
  const r = await db('bankTransactions').where({ tenantId, id }).first(TX_COLUMNS);
  if (!r) throw notFound('Bank transaction');
  return toBankTransactionView(r);
}

export async function listBankTransactions(
  db: Db,
  tenantId: string,
  q: { status?: BankTransactionStatus; statementId?: string; from?: string; to?: string; page: number; limit: number },
) {
  const base = db('bankTransactions').where({ tenantId });
  if (q.status) base.where({ status: q.status });
  if (q.statementId) base.where({ statementId: q.statementId });
  if (q.from) base.where('bookingDate', '>=', q.from);
  if (q.to) base.where('bookingDate', '<=', q.to);
  const [{ count }] = await base.clone().count({ count: '*' });
  const rows = await base
    .select(TX_COLUMNS)
    .orderBy([
      { column: 'bookingDate', order: 'desc' },
      { column: 'id', order: 'asc' },
    ])
    .limit(q.limit)
    .offset((q.page - 1) * q.limit);
  const total = Number(count);
  return {
    data: rows.map(toBankTransactionView),
    pagination: pageEnvelope(q, total),
  };
}

/**
 * The open invoices an entry may pay (docs/bank-statements.md, "Matching"): sales invoices
 * (rechnung) for a credit, incoming invoices for a debit, offen or teilbezahlt, in the entry's
 * currency. With the party's names and the IBANs known for it: the supplier's own, and every
 * IBAN that paid (or was paid for) an invoice of the same customer or supplier before.
 */
export async function matchCandidates(db: Knex | Knex.Transaction, tenantId: string, direction: Direction, currency: string): Promise<MatchCandidate[]> {
  const sales = direction === 'credit';
  const rows: {
    id: string;
    number: string | null;
    invoiceNumber: string | null;
    currency: string;
    totalGross: string;
    amountPaid: string;
    partyId: string | null;
    names: (string | null)[];
    supplierIban: string | null;
  }[] = await db('invoices as i')
    .where({ 'i.tenantId': tenantId, 'i.type': sales ? 'rechnung' : 'eingangsrechnung', 'i.currency': currency })
    .whereIn('i.status', ['offen', 'teilbezahlt'])
    .whereNull('i.deletedAt')
    .modify((qb) => {
      if (sales) qb.leftJoin('customers as p', 'p.id', 'i.customerId');
      else qb.leftJoin('suppliers as p', 'p.id', 'i.supplierId');
    })
    .select(
      'i.id',
      'i.number',
      'i.invoiceNumber',
      'i.currency',
      'i.totalGross',
      'i.amountPaid',
      db.raw(sales ? 'i.customer_id as "partyId"' : 'i.supplier_id as "partyId"'),
      db.raw(sales ? `array[p.name, p.company, i.customer_snapshot->>'name', i.customer_snapshot->>'company'] as names` : 'array[p.name] as names'),
      db.raw(sales ? 'null as "supplierIban"' : 'p.iban as "supplierIban"'),
    );
  if (rows.length === 0) return [];
  const partyIds = [...new Set(rows.map((r) => r.partyId).filter((p): p is string => !!p))];
  const known: { partyId: string; iban: string }[] = partyIds.length
    ? await db('bankTransactions as t')
        .join('invoices as i', 'i.id', 't.invoiceId')
        .where({ 't.tenantId': tenantId, 't.status': 'matched' })
        .whereNotNull('t.counterpartyIban')
        .whereIn(sales ? 'i.customerId' : 'i.supplierId', partyIds)
        .distinct(db.raw(sales ? 'i.customer_id as "partyId"' : 'i.supplier_id as "partyId"'), 't.counterpartyIban as iban')
    : [];
  return rows.map((r) => ({
    invoiceId: r.id,
    number: sales ? r.number : r.invoiceNumber,
    currency: r.currency,
    amountDue: amountDue(r.totalGross, r.amountPaid),
    partyNames: r.names.filter((n): n is string => !!n),
    partyIbans: [...(r.supplierIban ? [r.supplierIban] : []), ...known.filter((k) => k.partyId === r.partyId).map((k) => k.iban)],
  }));
}
