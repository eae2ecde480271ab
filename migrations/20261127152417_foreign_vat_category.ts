import type { Knex } from 'knex';

/**
 * The purchase-only VAT category foreignVat (docs/vat-categories.md, "Foreign VAT"): VAT another
 * country's supplier charged, booked by the e-invoice import, not input tax of the domestic return.
 * The lists are written out: a migration must not change when the code's lists do.
 */
const BEFORE = ['standard', 'zeroRated', 'exempt', 'reverseCharge', 'intraCommunitySupply', 'export', 'notSubject'];
const AFTER = [...BEFORE, 'foreignVat'];

const check = (categories: string[]) => `tax_category is null or tax_category in (${categories.map((c) => `'${c}'`).join(', ')})`;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('invoice_items', (t) => {
    t.dropChecks(['invoice_items_tax_category_check']);
    t.check(check(AFTER), [], 'invoice_items_tax_category_check');
  });
}

export async function down(knex: Knex): Promise<void> {
  // Foreign VAT lines become standard lines again (their rate stays): the old list has no place for them.
  await knex('invoice_items').where({ tax_category: 'foreignVat' }).update({ tax_category: 'standard' });
  await knex.schema.alterTable('invoice_items', (t) => {
    t.dropChecks(['invoice_items_tax_category_check']);
    t.check(check(BEFORE), [], 'invoice_items_tax_category_check');
  });
}
