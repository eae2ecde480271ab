import type { Knex } from 'knex';

/**
 * Lists that do not grow with the tenant (docs/lists.md, issue 31):
 * - invoice_day_counts: live (not deleted) invoices per (tenant, type, status, issue_date, slot);
 *   invoice_party_counts the same per customer ('c') and supplier ('s'). pagination.total is the
 *   sum over the filter's keys and date range instead of count(*) over the matching rows.
 * - list_counts: live customers and suppliers per tenant.
 * Maintained by statement-level triggers with transition tables, so every write path (create,
 * status change, soft delete, restore, bulk insert, a hand-written UPDATE) changes them in its
 * own transaction, and a million-row insert aggregates once instead of firing a million times.
 * `slot` (pg_backend_pid() % 8) spreads one tenant's concurrent writers over up to 8 rows per key,
 * so they do not queue on one hot counter row until commit; readers sum the slots.
 * Indexes: one per filter variant of the invoice list in its order (issue_date desc, created_at
 * desc, id desc), so a page and a keyset cursor are one index range; customers and suppliers by
 * name for their cursors.
 */
const COLS = 'tenant_id, type, status, issue_date, customer_id, supplier_id';

/** The rows whose counted key changed in an UPDATE (an ordinary edit writes no counter). */
const CHANGED = `select o.id from old_rows o join new_rows n on n.id = o.id
  where o.tenant_id is distinct from n.tenant_id or o.type is distinct from n.type or o.status is distinct from n.status
     or o.issue_date is distinct from n.issue_date or o.customer_id is distinct from n.customer_id
     or o.supplier_id is distinct from n.supplier_id or (o.deleted_at is null) <> (n.deleted_at is null)`;

/** Signed deltas (COLS, d) of the statement's live rows, by operation. */
const DELTAS = {
  INSERT: `select ${COLS}, 1 as d from new_rows where deleted_at is null`,
  DELETE: `select ${COLS}, -1 as d from old_rows where deleted_at is null`,
  UPDATE: `select ${COLS}, -1 as d from old_rows where deleted_at is null and id in (${CHANGED})
           union all select ${COLS}, 1 from new_rows where deleted_at is null and id in (${CHANGED})`,
};

/**
 * Both counter upserts for one operation's deltas, in one statement (the deltas computed once);
 * keys in a fixed order, so two transactions lock shared counter rows in the same order.
 */
const apply = (deltas: string) => `
  with src as materialized (${deltas}),
  day as (
    insert into invoice_day_counts as x (tenant_id, type, status, issue_date, slot, n)
    select tenant_id, type, status, issue_date, pg_backend_pid() % 8, sum(d) from src
     group by 1, 2, 3, 4 having sum(d) <> 0 order by 1, 2, 3, 4
    on conflict (tenant_id, type, status, issue_date, slot) do update set n = x.n + excluded.n)
  insert into invoice_party_counts as x (tenant_id, party, party_id, type, status, issue_date, slot, n)
  select tenant_id, party, party_id, type, status, issue_date, pg_backend_pid() % 8, sum(d) from (
      select tenant_id, 'c' as party, customer_id as party_id, type, status, issue_date, d from src where customer_id is not null
      union all
      select tenant_id, 's', supplier_id, type, status, issue_date, d from src where supplier_id is not null) p
   group by 1, 2, 3, 4, 5, 6 having sum(d) <> 0 order by 1, 2, 3, 4, 5, 6
  on conflict (tenant_id, party, party_id, type, status, issue_date, slot) do update set n = x.n + excluded.n;`;

/** list_counts deltas of customers/suppliers (live rows per tenant), by operation. */
const LIST_DELTAS = {
  INSERT: 'select tenant_id, 1 as d from new_rows where deleted_at is null',
  DELETE: 'select tenant_id, -1 as d from old_rows where deleted_at is null',
  UPDATE: `select tenant_id, -1 as d from old_rows where deleted_at is null
           union all select tenant_id, 1 from new_rows where deleted_at is null`,
};
const applyList = (deltas: string) => `
  insert into list_counts as x (tenant_id, list, slot, n)
  select tenant_id, tg_table_name, pg_backend_pid() % 8, sum(d) from (${deltas}) s
   group by 1 having sum(d) <> 0 order by 1
  on conflict (tenant_id, list, slot) do update set n = x.n + excluded.n;`;

/** A trigger function with one branch per operation (plpgsql plans a branch only when it runs). */
const fn = (name: string, body: (op: 'INSERT' | 'DELETE' | 'UPDATE') => string) => `
  create function ${name}() returns trigger language plpgsql as $$
  begin
    if tg_op = 'INSERT' then ${body('INSERT')}
    elsif tg_op = 'DELETE' then ${body('DELETE')}
    else ${body('UPDATE')}
    end if;
    return null;
  end $$;`;

/** Statement triggers with transition tables: one per operation (a transition table allows one event). */
const triggers = (table: string, f: string) => `
  create trigger ${table}_counts_ins after insert on ${table} referencing new table as new_rows for each statement execute function ${f}();
  create trigger ${table}_counts_del after delete on ${table} referencing old table as old_rows for each statement execute function ${f}();
  create trigger ${table}_counts_upd after update on ${table} referencing old table as old_rows new table as new_rows
    for each statement execute function ${f}();`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table invoice_day_counts (
      tenant_id uuid not null, type text not null, status text not null, issue_date date not null,
      slot smallint not null, n bigint not null,
      primary key (tenant_id, type, status, issue_date, slot));
    create table invoice_party_counts (
      tenant_id uuid not null, party char(1) not null, party_id uuid not null, type text not null, status text not null,
      issue_date date not null, slot smallint not null, n bigint not null,
      primary key (tenant_id, party, party_id, type, status, issue_date, slot));
    create table list_counts (
      tenant_id uuid not null, list text not null, slot smallint not null, n bigint not null,
      primary key (tenant_id, list, slot));
    ${fn('invoice_counts', (op) => (op === 'UPDATE' ? `if not exists (${CHANGED}) then return null; end if; ${apply(DELTAS[op])}` : apply(DELTAS[op])))}
    ${fn('list_counts_of', (op) => applyList(LIST_DELTAS[op]))}
    ${triggers('invoices', 'invoice_counts')}
    ${triggers('customers', 'list_counts_of')}
    ${triggers('suppliers', 'list_counts_of')}

    insert into invoice_day_counts (tenant_id, type, status, issue_date, slot, n)
    select tenant_id, type, status, issue_date, 0, count(*) from invoices where deleted_at is null group by 1, 2, 3, 4;
    insert into invoice_party_counts (tenant_id, party, party_id, type, status, issue_date, slot, n)
    select tenant_id, 'c', customer_id, type, status, issue_date, 0, count(*) from invoices
     where deleted_at is null and customer_id is not null group by 1, 3, 4, 5, 6
    union all
    select tenant_id, 's', supplier_id, type, status, issue_date, 0, count(*) from invoices
     where deleted_at is null and supplier_id is not null group by 1, 3, 4, 5, 6;
    insert into list_counts (tenant_id, list, slot, n)
    select tenant_id, 'customers', 0, count(*) from customers where deleted_at is null group by 1
    union all
    select tenant_id, 'suppliers', 0, count(*) from suppliers where deleted_at is null group by 1;

    -- The list's order for every filter variant (the unfiltered one is invoices_list_idx).
    drop index if exists invoices_list_status_idx;
    create index invoices_list_status_idx on invoices (tenant_id, status, issue_date desc, created_at desc, id desc) where deleted_at is null;
    create index invoices_list_type_idx on invoices (tenant_id, type, issue_date desc, created_at desc, id desc) where deleted_at is null;
    create index invoices_list_type_status_idx on invoices (tenant_id, type, status, issue_date desc, created_at desc, id desc) where deleted_at is null;
    -- Per customer and supplier: replace the (tenant_id, party) lookups with ordered ones that also
    -- serve them; type, status and deleted_at included so a filtered deep page stays index-only.
    drop index if exists invoices_tenant_id_customer_id_index;
    create index invoices_customer_list_idx on invoices (tenant_id, customer_id, issue_date desc, created_at desc, id desc)
      include (type, status, deleted_at) where customer_id is not null;
    drop index if exists invoices_supplier_idx;
    create index invoices_supplier_list_idx on invoices (tenant_id, supplier_id, issue_date desc, created_at desc, id desc)
      include (type, status, deleted_at) where supplier_id is not null;
    create index customers_list_idx on customers (tenant_id, name, created_at, id) where deleted_at is null;
    create index suppliers_list_idx on suppliers (tenant_id, name, id) where deleted_at is null;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index if exists suppliers_list_idx;
    drop index if exists customers_list_idx;
    drop index if exists invoices_supplier_list_idx;
    create index if not exists invoices_supplier_idx on invoices (tenant_id, supplier_id) where supplier_id is not null;
    drop index if exists invoices_customer_list_idx;
    create index if not exists invoices_tenant_id_customer_id_index on invoices (tenant_id, customer_id);
    drop index if exists invoices_list_type_status_idx;
    drop index if exists invoices_list_type_idx;
    drop index if exists invoices_list_status_idx;
    create index invoices_list_status_idx on invoices (tenant_id, status, issue_date desc) where deleted_at is null;
    drop trigger if exists invoices_counts_ins on invoices;
    drop trigger if exists invoices_counts_del on invoices;
    drop trigger if exists invoices_counts_upd on invoices;
    drop trigger if exists customers_counts_ins on customers;
    drop trigger if exists customers_counts_del on customers;
    drop trigger if exists customers_counts_upd on customers;
    drop trigger if exists suppliers_counts_ins on suppliers;
    drop trigger if exists suppliers_counts_del on suppliers;
    drop trigger if exists suppliers_counts_upd on suppliers;
    drop function if exists invoice_counts();
    drop function if exists list_counts_of();
    drop table if exists invoice_day_counts, invoice_party_counts, list_counts;
  `);
}
