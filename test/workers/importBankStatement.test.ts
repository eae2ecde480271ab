/**
 * The import job's at-least-once guarantees, its handler called in-process (docs/bank-statements.md,
 * "Deduplication"): two runs of one job at once, and a run after a crash, store and pay once.
 */
import type { Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { db } from '../../shared/db';
import { systemActor } from '../../shared/actor';
import type { ImportBankStatementPayload } from '../../shared/jobs/catalog';
import { receiveBankStatement } from '../../shared/commands/bankStatements/receive';
import { importBankStatementJob } from '../../workers/jobs/bank-statements/importBankStatement';
import { createTenant } from '../helpers/factories';
import { createSentInvoice } from '../helpers/invoiceFactory';
import { camt053 } from '../helpers/bankFiles';

const runJob = (tenantId: string, statementId: string) =>
  importBankStatementJob({ data: { tenantId, statementId } } as Job<ImportBankStatementPayload>) as Promise<Record<string, unknown>>;

describe('import-bank-statement', () => {
  it('two runs at once and a retry after a crash import and pay once', async () => {
    const tenant = await createTenant();
    const inv = await createSentInvoice(tenant);
    const file = camt053({
      version: '08',
      iban: 'AT611904300234573201',
      entries: [
        { ref: 'J1', amount: inv.totalGross, direction: 'credit', bookingDate: '2026-11-20', ustrd: [`Rechnung ${inv.number}`] },
        { ref: 'J2', amount: '9.99', direction: 'debit', bookingDate: '2026-11-20', ustrd: ['Gebühr'] },
      ],
    });
    const { id } = await db().transaction((trx) =>
      receiveBankStatement({ trx, actor: systemActor(tenant.id) }, { bytes: Buffer.from(file), mediaType: 'application/xml' }),
    );
    // A crashed attempt leaves the row processing (nothing else: the import is one transaction).
    await db()('bankStatements').where({ id }).update({ status: 'processing' });
    const outcomes = await Promise.all([runJob(tenant.id, id), runJob(tenant.id, id)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['imported', 'skipped']);
    expect(await runJob(tenant.id, id)).toMatchObject({ status: 'imported', skipped: true });
    expect(await db()('bankTransactions').where({ tenantId: tenant.id })).toHaveLength(2);
    expect(await db()('payments').where({ tenantId: tenant.id })).toHaveLength(1);
    expect(await db()('journalEntries').where({ tenantId: tenant.id, sourceType: 'bank_payment' })).toHaveLength(1);
    expect((await db()('invoices').where({ id: inv.id }).first()).status).toBe('bezahlt');
  });

  it('an unknown statement id is nothing to do', async () => {
    const tenant = await createTenant();
    expect(await runJob(tenant.id, '00000000-0000-4000-8000-000000000000')).toEqual({ status: 'missing' });
  });
});
