import type { Knex } from 'knex';

/**
 * Every write that changes what GET /api/invoices/:id shows must give the invoice's row a new
 * version (docs/invoice-read-cache.md). Rows read through the invoice (items, payments, e-mail
 * deliveries) touch it by trigger (`view_revision + 1`), once per statement however many rows it
 * wrote, as do credit notes pointing at it (later dropped: 20261126100000); an invoice this
 * transaction already wrote is not touched again.
 */

/**
 * Touches the invoices in `ids` that this transaction has not written yet. Planned once per
 * connection and for the index: PL/pgSQL keeps a statement's plan for the connection's life, and
 * left alone it re-planned on every call or kept a whole-table scan made while the table was
 * small (docs/benchmarks.md, 2026-11-26).
 */
const TOUCH = 'update invoices set view_revision = view_revision + 1 where id = any(ids) and xmin <> pg_current_xact_id()::xid';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table invoices add column view_revision bigint not null default 0');
  await knex.raw(`
    create function invoice_view_touch() returns trigger language plpgsql
      set enable_seqscan = off set plan_cache_mode = force_generic_plan as $$
    declare
      ids uuid[];
    begin
      -- Separate statements: an UPDATE's trigger alone has the table of rows before.
      if tg_op = 'UPDATE' then
        ids := array(select invoice_id from changed union select invoice_id from changed_before);
      else
        ids := array(select distinct invoice_id from changed);
      end if;
      ${TOUCH};
      return null;
    end $$;

    create function invoice_view_touch_related() returns trigger language plpgsql
      set enable_seqscan = off set plan_cache_mode = force_generic_plan as $$
    declare
      ids uuid[] := case tg_op
        when 'INSERT' then array[new.related_invoice_id]
        when 'DELETE' then array[old.related_invoice_id]
        else array[old.related_invoice_id, new.related_invoice_id] end;
    begin
      ${TOUCH};
      return null;
    end $$;
  `);
  for (const table of ['invoice_items', 'payments', 'deliveries']) {
    // One event per trigger: PostgreSQL refuses transition tables on a trigger with several.
    await knex.raw(`
      create trigger ${table}_view_touch_insert after insert on ${table}
        referencing new table as changed for each statement execute function invoice_view_touch();
      create trigger ${table}_view_touch_update after update on ${table}
        referencing old table as changed_before new table as changed for each statement execute function invoice_view_touch();
      create trigger ${table}_view_touch_delete after delete on ${table}
        referencing old table as changed for each statement execute function invoice_view_touch();
    `);
  }
  await knex.raw(`
    create trigger invoices_view_touch_related_insert after insert on invoices
      for each row when (new.related_invoice_id is not null) execute function invoice_view_touch_related();
    create trigger invoices_view_touch_related_update after update of related_invoice_id, type, deleted_at on invoices
      for each row when (
        (old.related_invoice_id is not null or new.related_invoice_id is not null)
        and (old.related_invoice_id is distinct from new.related_invoice_id or old.type is distinct from new.type
             or old.deleted_at is distinct from new.deleted_at))
      execute function invoice_view_touch_related();
    create trigger invoices_view_touch_related_delete after delete on invoices
      for each row when (old.related_invoice_id is not null) execute function invoice_view_touch_related();
  `);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['invoice_items', 'payments', 'deliveries']) {
    for (const op of ['insert', 'update', 'delete']) await knex.raw(`drop trigger if exists ${table}_view_touch_${op} on ${table}`);
  }
  for (const op of ['insert', 'update', 'delete']) await knex.raw(`drop trigger if exists invoices_view_touch_related_${op} on invoices`);
  await knex.raw('drop function if exists invoice_view_touch()');
  await knex.raw('drop function if exists invoice_view_touch_related()');
  await knex.raw('alter table invoices drop column if exists view_revision');
}
