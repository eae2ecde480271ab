import type { Knex } from 'knex';

/**
 * The supplier's expense history as running counts per supplier and account (docs/ledger.md), so
 * posting answers "most used, ties to the most recent" with one index lookup. Kept by a trigger on
 * journal_lines (append-only: GoBD), created before the backfill so no line is counted twice or
 * missed. The trigger reads by primary key and compares the tenant after: other plans read far more
 * (docs/benchmarks.md). Its 'invoice' is INVOICE_SOURCE of shared/ledger/posting.ts.
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
