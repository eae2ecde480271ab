import type { Knex } from 'knex';

/**
 * The format an e-mail delivery attaches (docs/e-invoicing.md, "Sending e-invoices"), chosen once
 * by `send` (request > customer > tenant's zugferdByDefault > pdf) and stored with the delivery, so
 * a retried job attaches the same thing whatever changed in the settings meanwhile. `format_source`
 * says where it came from; only the tenant's blanket ZUGFeRD default may fall back to the plain PDF.
 * Rows from before have neither: the job then decides as it did (the tenant setting at job time).
 */
const FORMATS = ['pdf', 'zugferd', 'xrechnung-ubl', 'xrechnung-cii', 'peppol-ubl', 'ebinterface'];
const SOURCES = ['request', 'customer', 'tenant', 'default'];
const list = (values: string[]) => values.map((v) => `'${v}'`).join(', ');

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('deliveries', (t) => {
    t.text('format').nullable();
    t.text('format_source').nullable();
  });
  await knex.raw(`alter table deliveries add constraint deliveries_format_check check (format in (${list(FORMATS)}))`);
  await knex.raw(`alter table deliveries add constraint deliveries_format_source_check check (format_source in (${list(SOURCES)}))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('deliveries', (t) => {
    t.dropColumn('format');
    t.dropColumn('format_source');
  });
}
