import type { Knex } from 'knex';

/**
 * The supplier's expense history as running counts (docs/ledger.md, step 3 of the expense
 * account): per supplier and expense account, how many debit lines the supplier's posted incoming
 * invoices have on it (reversals excluded) and when it was last used. Posting used to aggregate
 * all of the supplier's earlier entries for every new one, so each posting cost in proportion to
 * that supplier's history (2.7 ms and 850 buffers at 96 invoices in the webhook benchmark,
 * docs/benchmarks.md); the counts answer the same question ("most used, ties to the most
 * recent") with one index lookup.
 *
 * Kept by a trigger on journal_lines, so every way a line is written counts, in the same
 * transaction as the line. The ledger is append-only (GoBD: corrections are reversing entries),
 * so lines are only inserted; the rows go with their tenant or supplier (cascade). The trigger's
 * 'invoice' is INVOICE_SOURCE of shared/ledger/posting.ts.
 *
 * The trigger looks each row up by its primary key, one statement each: as one join its plan,
 * cached per connection and made while the tables had no statistics, read 3,200 buffers a line.
 * The tenant is compared after the key lookup, not as a second condition of it: with both, such a
 * plan went through a tenant index (95 buffers a line at 6,000 invoices) instead of the key.
 *
 * The trigger is created before the backfill, in the migration's transaction: creating it locks
 * journal_lines against writes until commit, so no line is counted twice or missed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('supplier_expense_usage', (t) => {
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.uuid('supplier_id').notNullable().references('suppliers.id').onDelete('CASCADE');
    t.text('account_number').notNullable();
    t.integer('uses').notNullable();
    t.timestamp('last_used_at', { useTz: true }).notNullable();
    t.primary(['tenant_id', 'supplier_id', 'account_number']);
  });
  await knex.raw(`
    create function supplier_expense_usage_count() returns trigger language plpgsql as $$
    declare
      entry record;
      account record;
      invoice record;
    begin
      if new.debit <= 0 then return null; end if;
      select tenant_id, source_type, source_id, reverses_entry_id, created_at into entry from journal_entries where id = new.entry_id;
      if entry.tenant_id is distinct from new.tenant_id or entry.source_type is distinct from 'invoice' or entry.reverses_entry_id is not null then
        return null;
      end if;
      select tenant_id, number, kind into account from ledger_accounts where id = new.account_id;
      if account.tenant_id is distinct from new.tenant_id or account.kind is distinct from 'expense' then return null; end if;
      select tenant_id, supplier_id into invoice from invoices where id = entry.source_id;
      if invoice.tenant_id is distinct from new.tenant_id or invoice.supplier_id is null then return null; end if;
      insert into supplier_expense_usage as u (tenant_id, supplier_id, account_number, uses, last_used_at)
      values (new.tenant_id, invoice.supplier_id, account.number, 1, entry.created_at)
      on conflict (tenant_id, supplier_id, account_number)
      do update set uses = u.uses + 1, last_used_at = greatest(u.last_used_at, excluded.last_used_at);
      return null;
    end $$;
    create trigger journal_lines_supplier_expense_usage after insert on journal_lines
      for each row execute function supplier_expense_usage_count();
  `);
  await knex.raw(`
    insert into supplier_expense_usage (tenant_id, supplier_id, account_number, uses, last_used_at)
    select je.tenant_id, i.supplier_id, a.number, count(*), max(je.created_at)
      from journal_entries je
      join invoices i on i.tenant_id = je.tenant_id and i.id = je.source_id
      join journal_lines jl on jl.tenant_id = je.tenant_id and jl.entry_id = je.id and jl.debit > 0
      join ledger_accounts a on a.tenant_id = je.tenant_id and a.id = jl.account_id and a.kind = 'expense'
     where je.source_type = 'invoice' and je.reverses_entry_id is null and i.supplier_id is not null
     group by je.tenant_id, i.supplier_id, a.number
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists journal_lines_supplier_expense_usage on journal_lines');
  await knex.raw('drop function if exists supplier_expense_usage_count()');
  await knex.schema.dropTableIfExists('supplier_expense_usage');
}
