import type { Knex } from 'knex';

/**
 * The PDF of an incoming invoice imported from an e-invoice is now a rendering of the e-invoice
 * (docs/e-invoicing-inbound.md, "The PDF of an imported invoice"), cached under the same key
 * (invoice, kind pdf, version) as before: PDFs rendered earlier from the booked copy are dropped so
 * the next request renders the new one. Only a cache: down has nothing to restore.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    "delete from documents where kind = 'pdf' and invoice_id in (select invoice_id from incoming_einvoices where status = 'imported' and invoice_id is not null)",
  );
}

export async function down(): Promise<void> {}
