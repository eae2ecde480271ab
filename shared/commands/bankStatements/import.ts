import { audit } from '../../audit';
import { AppError } from '../../errors';
import { dedupKeys, decideMatch, type Direction, type MatchCandidate, type ParsedStatement } from '../../domain/bankStatements';
import { normalizeIban } from '../../domain/iban';
import { dec, fmtMoney } from '../../domain/money';
import { BankStatement, type BankFlag } from '../../models/BankStatement';
import { BankTransaction } from '../../models/BankTransaction';
import { matchCandidates } from '../../queries/bankStatements';
import { applyMatch } from './match';
import type { CommandContext } from '../types';

/** The statement row locked for its import; null when it is final already (a retry of a finished job). */
async function lockOpenStatement(ctx: CommandContext, statementId: string): Promise<BankStatement | null> {
  const row = await BankStatement.query(ctx.trx).where({ tenantId: ctx.actor.tenantId, id: statementId }).forUpdate().first();
  if (!row || row.status === 'imported' || row.status === 'rejected') return null;
  return row;
}

/** A statement that cannot be read: rejected, naming the cause (no retry can change it). */
export async function rejectBankStatement(ctx: CommandContext, statementId: string, reason: string): Promise<void> {
  if (!(await lockOpenStatement(ctx, statementId))) return;
  await BankStatement.query(ctx.trx)
    .where({ tenantId: ctx.actor.tenantId, id: statementId })
    .patch({ status: 'rejected', error: reason.slice(0, 2000), processedAt: ctx.trx.fn.now() as never });
  await audit(ctx.trx, ctx.actor, { action: 'bank_statement.rejected', entityType: 'bank_statement', entityId: statementId, data: { reason } });
}

export interface ImportOutcome {
  status: 'imported' | 'skipped';
  entries: number;
  new: number;
  duplicates: number;
  matched: number;
}

/**
 * Store a read statement's booked entries and match the new ones (docs/bank-statements.md). One
 * transaction with the statement row locked: a retry after a crash finds it open and does it all
 * again, and the unique (tenant_id, dedup_key) makes every entry that is already stored, by this
 * statement or an overlapping one, a duplicate that is neither stored nor matched again. Only
 * entries stored by this run are matched, so no transaction can pay twice.
 *
 * Flags: a statement of an account other than the tenant's IBAN (`unknownAccount`) is imported
 * but not matched automatically; entries in another currency than the tenant's (`foreignCurrency`)
 * and reversals (`reversal`) are stored, not matched.
 */
export async function importBankStatement(ctx: CommandContext, statementId: string, read: ParsedStatement): Promise<ImportOutcome> {
  const { trx, actor } = ctx;
  const tenantId = actor.tenantId;
  const stmt = await lockOpenStatement(ctx, statementId);
  if (!stmt) return { status: 'skipped', entries: 0, new: 0, duplicates: 0, matched: 0 };
  const tenant = await trx('tenants').where({ id: tenantId }).first('iban', 'currency');
  const ownIban = tenant.iban ? normalizeIban(tenant.iban) : null;
  const unknownAccount = !read.accountIban || read.accountIban !== ownIban;
  const statementFlags: BankFlag[] = unknownAccount ? ['unknownAccount'] : [];
  const warnings = [...read.warnings];
  if (unknownAccount) {
    warnings.push(
      `the account ${read.accountIban ?? read.account} is not the tenant's configured IBAN (${ownIban ?? 'none set'}): imported, not matched automatically`,
    );
  }

  const keys = dedupKeys(read.account, read.entries);
  const rows = read.entries.map((e, i) => {
    const flags: BankFlag[] = [...statementFlags];
    if (e.currency !== tenant.currency) flags.push('foreignCurrency');
    if (e.reversal) flags.push('reversal');
    return {
      tenantId,
      statementId,
      dedupKey: keys[i],
      account: read.account,
      bookingDate: e.bookingDate,
      valueDate: e.valueDate,
      amount: e.amount,
      direction: e.direction,
      currency: e.currency,
      reversal: e.reversal,
      counterpartyName: e.counterpartyName,
      counterpartyIban: e.counterpartyIban,
      remittance: e.remittance,
      creditorReference: e.creditorReference,
      endToEndId: e.endToEndId,
      entryReference: e.entryReference,
      bankText: e.bankText,
      flags,
      note: flags.includes('foreignCurrency') ? `in ${e.currency}, not the ledger's ${tenant.currency}: not matched` : null,
    };
  });
  // Zero amounts (some banks list fee-free notices as entries) pay nothing and break no rule: left out.
  const storable = rows.filter((r) => dec(r.amount).gt(0));
  const inserted: BankTransaction[] = [];
  for (let i = 0; i < storable.length; i += 500) {
    // knex, not the model: objection maps returned rows onto its input rows by position, which is
    // wrong as soon as a conflict leaves one out.
    const batch: BankTransaction[] = await trx('bankTransactions')
      .insert(storable.slice(i, i + 500).map((r) => ({ ...r, flags: JSON.stringify(r.flags) })))
      .onConflict(['tenantId', 'dedupKey'])
      .ignore()
      .returning('*');
    inserted.push(...batch);
  }
  // returning gives only the rows inserted: the others were stored before.
  const duplicates = storable.length - inserted.length;

  let matched = 0;
  if (!unknownAccount) {
    const pools = new Map<string, MatchCandidate[]>();
    const pool = async (direction: Direction, currency: string) => {
      const key = `${direction}|${currency}`;
      if (!pools.has(key)) pools.set(key, await matchCandidates(trx, tenantId, direction, currency));
      return pools.get(key)!;
    };
    // In booking order, so the earlier transfer pays an invoice first.
    const order = [...inserted].sort((a, b) => (a.bookingDate < b.bookingDate ? -1 : a.bookingDate > b.bookingDate ? 1 : 0));
    for (const tx of order) {
      if (tx.flags.length) continue;
      const candidates = await pool(tx.direction, tx.currency);
      const decision = decideMatch(tx, candidates);
      if (decision.kind === 'none') {
        await BankTransaction.query(trx).where({ tenantId, id: tx.id }).patch({ note: decision.reason });
        continue;
      }
      const candidate = candidates.find((c) => c.invoiceId === decision.invoiceId)!;
      try {
        // A savepoint: an invoice that refuses the payment (changed meanwhile) leaves this entry unmatched, not the import failed.
        await trx.transaction((sp) =>
          applyMatch({ trx: sp, actor }, tx, {
            invoiceId: decision.invoiceId,
            amount: decision.amount,
            rule: decision.rule,
            note: null,
            number: candidate.number,
          }),
        );
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        await BankTransaction.query(trx)
          .where({ tenantId, id: tx.id })
          .patch({ note: `not matched: ${err.message}`.slice(0, 500) });
        continue;
      }
      matched++;
      candidate.amountDue = fmtMoney(dec(candidate.amountDue).minus(dec(decision.amount)));
    }
  }

  await BankStatement.query(trx)
    .where({ tenantId, id: statementId })
    .patch({
      status: 'imported',
      format: read.format,
      statementRef: read.statementId,
      account: read.account,
      accountIban: read.accountIban,
      currency: read.currency,
      warnings: warnings.slice(0, 100) as never,
      flags: statementFlags as never,
      entries: storable.length,
      newEntries: inserted.length,
      duplicates,
      processedAt: trx.fn.now() as never,
    });
  await audit(trx, actor, {
    action: 'bank_statement.imported',
    entityType: 'bank_statement',
    entityId: statementId,
    data: { format: read.format, entries: storable.length, new: inserted.length, duplicates, matched },
  });
  return { status: 'imported', entries: storable.length, new: inserted.length, duplicates, matched };
}
