import type { Knex } from 'knex';

/**
 * E-invoice data (docs/e-invoicing.md, "XRechnung"): the customer's default buyer reference
 * (BT-10, the Leitweg-ID of a German public buyer), its electronic address (Peppol participant
 * id: ISO 6523 / EAS scheme + id) and preferred e-invoice format; each invoice's own buyer
 * reference and purchase order reference (BT-13). All optional. The document cache takes the
 * XML e-invoices (XRechnung in both syntaxes, Peppol BIS UBL) as kinds of their own.
 */
const OLD_KINDS = ['pdf', 'zugferd', 'ebinterface'];
const KINDS = [...OLD_KINDS, 'xrechnung-cii', 'xrechnung-ubl', 'peppol-ubl'];
const kindCheck = (kinds: string[]) => `alter table documents add constraint documents_kind_check check (kind in (${kinds.map((k) => `'${k}'`).join(', ')}))`;
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('customers', (t) => {
    t.string('buyer_reference', 200).nullable();
    t.jsonb('peppol_id').nullable();
    t.string('einvoice_format', 20).nullable();
  });
  await knex.raw(`alter table customers add constraint customers_einvoice_format_check
    check (einvoice_format in ('pdf', 'zugferd', 'xrechnung-ubl', 'xrechnung-cii', 'peppol-ubl', 'ebinterface'))`);
  await knex.schema.alterTable('invoices', (t) => {
    t.string('buyer_reference', 200).nullable();
    t.string('order_reference', 200).nullable();
  });
  await knex.raw('alter table documents drop constraint documents_kind_check');
  await knex.raw(kindCheck(KINDS));
}

export async function down(knex: Knex): Promise<void> {
  await knex('documents').whereNotIn('kind', OLD_KINDS).delete();
  await knex.raw('alter table documents drop constraint documents_kind_check');
  await knex.raw(kindCheck(OLD_KINDS));
  await knex.schema.alterTable('invoices', (t) => {
    t.dropColumn('buyer_reference');
    t.dropColumn('order_reference');
  });
  await knex.schema.alterTable('customers', (t) => {
    t.dropColumn('buyer_reference');
    t.dropColumn('peppol_id');
    t.dropColumn('einvoice_format');
  });
}
