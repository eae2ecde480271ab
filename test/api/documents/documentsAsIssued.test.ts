import { describe, expect, it } from 'vitest';
import { db } from '../../../shared/db';
import { createTeam } from '../../helpers/factories';
import { cancelInvoice, createSentInvoice, recordPayment } from '../../helpers/invoiceFactory';
import { reissueDocuments } from '../../../migrations/20261126120000_documents_as_issued';

/** Migration 20261126120000: data from before the as-issued rendering fixes is brought in line with them. */
describe('migration: documents as issued', () => {
  it("old Storno credit notes get the original's issue date as service date; paid and cancelled documents get a new version and lose their cached artifacts", async () => {
    const { tenant } = await createTeam();
    const cancelled = await createSentInvoice(tenant);
    const { creditNoteId } = await cancelInvoice(tenant, null, cancelled.id);
    const paid = await createSentInvoice(tenant);
    await recordPayment(tenant, null, paid.id, { amount: paid.totalGross });
    const open = await createSentInvoice(tenant);
    // As an earlier cancellation left it: no service date on the credit note.
    await db()('invoices').where({ id: creditNoteId }).update({ serviceDate: null });
    const cache = (invoiceId: string, version: number) =>
      db()('documents').insert({ tenantId: tenant.id, invoiceId, kind: 'pdf', version, contentType: 'application/pdf', content: Buffer.from('%PDF old') });
    const versions = async () =>
      Object.fromEntries(
        (await db()('invoices').whereIn('id', [cancelled.id, paid.id, open.id, creditNoteId!]).select('id', 'version')).map((r) => [r.id, r.version]),
      );
    const before = await versions();
    for (const id of [cancelled.id, paid.id, open.id]) await cache(id, before[id]);

    const result = await reissueDocuments(db(), tenant.id);
    expect(result).toEqual({ serviceDates: 1, invoices: 3, documents: 2 });
    expect((await db()('invoices').where({ id: creditNoteId }).first()).serviceDate).toBe(cancelled.issueDate);
    const after = await versions();
    expect(after[cancelled.id]).toBe(before[cancelled.id] + 1);
    expect(after[paid.id]).toBe(before[paid.id] + 1);
    expect(after[creditNoteId!]).toBe(before[creditNoteId!] + 1); // settled by offset: bezahlt
    expect(after[open.id]).toBe(before[open.id]);
    const cached = (await db()('documents').whereIn('invoiceId', [cancelled.id, paid.id, open.id]).select('invoiceId')).map((r) => r.invoiceId);
    expect(cached).toEqual([open.id]);
  });
});
