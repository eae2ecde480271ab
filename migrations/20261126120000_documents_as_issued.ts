import type { Knex } from 'knex';

/**
 * Brings data written before two rendering fixes in line with them: Storno credit notes get the
 * cancelled invoice's service date, else its issue date (they had copied a null); and invoices
 * whose cached documents may show a payment state get a new version, their old artifacts deleted,
 * so documents show the invoice as issued (docs/pdf-and-zugferd.md, "Documents show the invoice
 * as issued"). No down: the corrected dates are what the documents should always have said.
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
