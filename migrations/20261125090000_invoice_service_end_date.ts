import type { Knex } from 'knex';

/**
 * The end of the service period (Leistungszeitraum, § 11 Abs. 1 Z 4 UStG / § 14 Abs. 4 Nr. 6
 * UStG): with service_date as its first day, an invoice names the period a service covered (a
 * monthly retainer) instead of one day. Nullable: a single day of service needs none. The check
 * keeps a period well-formed whatever writes the row (docs/invoices.md).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table invoices add column service_end_date date');
  await knex.raw(
    `alter table invoices add constraint invoices_service_period_check
       check (service_end_date is null or (service_date is not null and service_end_date >= service_date))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table invoices drop constraint if exists invoices_service_period_check');
  await knex.raw('alter table invoices drop column if exists service_end_date');
}
