import type { Knex } from 'knex';

/**
 * The VAT situation of each line (docs/vat-categories.md) and the exchange rate a foreign-currency
 * invoice was converted with (docs/exchange-rates.md). Existing lines get the category the reports
 * inferred until now (rate, the buyer's VAT ID and country, the tenant's country), so
 * their figures do not change; a 0 % line that inference cannot place stays null (unclassified).
 * The lists are written out: a migration must not change when the code's lists do.
 */
const EU_VAT_PREFIXES = [
  'AT',
  'BE',
  'BG',
  'CY',
  'CZ',
  'DE',
  'DK',
  'EE',
  'EL',
  'ES',
  'FI',
  'FR',
  'HR',
  'HU',
  'IE',
  'IT',
  'LT',
  'LU',
  'LV',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SE',
  'SI',
  'SK',
  'XI',
];
const EU_COUNTRIES = [
  'AT',
  'BE',
  'BG',
  'CY',
  'CZ',
  'DE',
  'DK',
  'EE',
  'GR',
  'ES',
  'FI',
  'FR',
  'HR',
  'HU',
  'IE',
  'IT',
  'LT',
  'LU',
  'LV',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SE',
  'SI',
  'SK',
];
const list = (xs: string[]) => xs.map((x) => `'${x}'`).join(', ');

const BACKFILL = `
  with facts as (
    select ii.id,
           ii.tax_rate,
           i.type,
           upper(left(regexp_replace(coalesce(i.customer_snapshot->>'vatId', c.vat_id, ''), '[^A-Za-z0-9]', '', 'g'), 2)) as buyer_prefix,
           upper(coalesce(i.customer_snapshot->>'country', c.country, '')) as buyer_country,
           (case when t.country = 'GR' then 'EL' else t.country end) as seller_prefix
      from invoice_items ii
      join invoices i on i.id = ii.invoice_id
      join tenants t on t.id = i.tenant_id
      left join customers c on c.id = i.customer_id and c.tenant_id = i.tenant_id
  )
  update invoice_items ii
     set tax_category = case
           when f.tax_rate > 0 then 'standard'
           when f.type = 'eingangsrechnung' then null
           when f.buyer_prefix in (${list(EU_VAT_PREFIXES)}) and f.buyer_prefix <> f.seller_prefix then 'reverseCharge'
           when f.buyer_country ~ '^[A-Z]{2}$' and f.buyer_country not in (${list(EU_COUNTRIES)}) then 'export'
         end
    from facts f
   where f.id = ii.id`;

const CATEGORIES = ['standard', 'zeroRated', 'exempt', 'reverseCharge', 'intraCommunitySupply', 'export', 'notSubject'];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('invoice_items', (t) => {
    t.text('tax_category');
    t.text('exemption_reason');
    t.text('exemption_note');
    // True when the client named the category; false when inferred, so sending re-infers it from the final facts.
    t.boolean('tax_category_given').notNullable().defaultTo(false);
    t.check(`tax_category is null or tax_category in (${CATEGORIES.map((c) => `'${c}'`).join(', ')})`, [], 'invoice_items_tax_category_check');
    t.check("exemption_reason is null or tax_category = 'exempt'", [], 'invoice_items_exemption_reason_check');
  });
  await knex.raw(BACKFILL);
  await knex.schema.alterTable('invoices', (t) => {
    t.decimal('exchange_rate', 18, 6);
    t.date('exchange_rate_date');
    t.text('exchange_rate_source');
    t.check('exchange_rate is null or exchange_rate > 0', [], 'invoices_exchange_rate_check');
    t.check("exchange_rate_source is null or exchange_rate_source in ('ecb', 'manual')", [], 'invoices_exchange_rate_source_check');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('invoices', (t) => {
    t.dropChecks(['invoices_exchange_rate_check', 'invoices_exchange_rate_source_check']);
    t.dropColumns('exchange_rate', 'exchange_rate_date', 'exchange_rate_source');
  });
  await knex.schema.alterTable('invoice_items', (t) => {
    t.dropChecks(['invoice_items_tax_category_check', 'invoice_items_exemption_reason_check']);
    t.dropColumns('tax_category', 'exemption_reason', 'exemption_note', 'tax_category_given');
  });
}
