import type { Knex } from 'knex';

/**
 * Data written before two rendering fixes of 2026-11-26 (shared/documents/renderDocument.ts
 * asIssued, shared/commands/cancelInvoice.ts) is brought in line with them:
 *
 * 1. A Storno credit note states the cancelled invoice's service date, else its issue date (the
 *    date the invoice stated as Leistungsdatum). Earlier cancellations copied a null service date,
 *    and the credit note's documents fell back to the cancellation day.
 * 2. Documents show the invoice as issued. Cached documents of paid, partly paid and cancelled
 *    documents may show the payment state ("vollständig beglichen") or, for a cancelled invoice,
 *    were never renderable as e-invoices. These invoices get a new version, so that their
 *    documents are rendered again under a new key (and ETag); the old versions' artifacts are
 *    deleted: the documents table is a cache of what the renderers produce, served for the current
 *    version only (shared/documents/artifactStore.ts).
 *
 * No down: the corrected service dates are what the documents should always have said.
 */
export async function up(knex: Knex): Promise<void> {
  await reissueDocuments(knex);
}

export async function down(): Promise<void> {}

/**
 * Every tenant's, or one tenant's: the test (test/api/documents/documentsAsIssued.test.ts) runs it
 * on its own tenant, beside other test files that must not see their documents disappear.
 */
export async function reissueDocuments(knex: Knex, tenantId: string | null = null): Promise<{ serviceDates: number; invoices: number; documents: number }> {
  const dates = await knex.raw(
    `update invoices g set service_date = coalesce(c.service_date, c.issue_date)
       from invoices c
      where c.credit_note_id = g.id and c.tenant_id = g.tenant_id and g.service_date is null and coalesce(c.service_date, c.issue_date) is not null
        and (?::uuid is null or g.tenant_id = ?::uuid)`,
    [tenantId, tenantId],
  );
  const { rows } = await knex.raw(
    `with bumped as (
       update invoices set version = version + 1
        where status in ('bezahlt', 'teilbezahlt', 'storniert') and (?::uuid is null or tenant_id = ?::uuid)
       returning id
     ), dropped as (
       delete from documents d using bumped where d.invoice_id = bumped.id returning d.id
     )
     select (select count(*) from bumped)::int as invoices, (select count(*) from dropped)::int as documents`,
    [tenantId, tenantId],
  );
  return { serviceDates: dates.rowCount ?? 0, ...(rows[0] as { invoices: number; documents: number }) };
}
