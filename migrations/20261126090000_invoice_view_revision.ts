import type { Knex } from 'knex';

/**
 * Every write that changes what GET /api/invoices/:id shows must give the invoice's row a new
 * version, so that the API can tell from one small statement whether the JSON it serialized
 * earlier still holds (docs/invoice-read-cache.md). The invoice's own columns do that by being
 * updated; the rows the view reads through the invoice do not, so triggers touch the invoice
 * (`view_revision + 1`) when they change:
 *
 * - items, payments, e-mail deliveries: once per statement (transition tables), however many
 *   rows it wrote: creating an invoice with ten items is one touch, not ten;
 * - a credit note's link (`creditNoteId` of the invoice it cancels): when a row pointing at an
 *   invoice with related_invoice_id is inserted, deleted, or changes that link, its type or its
 *   deletion. The WHEN conditions run without calling the function for every other write.
 *
 * An invoice this transaction already wrote has a new version anyway and is not touched again
 * (`xmin` is the current transaction's id). The customer, the tenant (country) and the related
 * invoice (number) are versioned by their own rows, which the check reads (shared/queries/invoices.ts).
 */

/**
 * Touches the invoices in `ids` that this transaction has not written yet. Planned once per
 * connection, and planned for the index: PL/pgSQL keeps a statement's plan for the life of a
 * connection, and left to itself it re-planned this one on every call (a custom plan for the
 * array, about 50 µs) and, in a fresh database, planned it as a scan of the whole table, which
 * then grew with every invoice (a 30 % lower api-write rate; docs/benchmarks.md, 2026-11-26).
 * As it is, a trigger costs 15–50 µs per statement.
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
