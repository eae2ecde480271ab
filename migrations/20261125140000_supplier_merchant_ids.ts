import type { Knex } from 'knex';

/**
 * suppliers.merchant_ids as keyed rows: the webhook pipeline finds a payment's supplier by the
 * provider's merchant id (docs/webhooks.md), which `merchant_ids ->> provider = id` could look up
 * with no index (docs/benchmarks.md); the unused GIN index goes. Kept by a trigger on suppliers in
 * the supplier's transaction; backfilled after the trigger exists, which locks suppliers until commit.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('supplier_merchant_ids', (t) => {
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('provider').notNullable();
    t.text('merchant_id').notNullable();
    t.uuid('supplier_id').notNullable().references('suppliers.id').onDelete('CASCADE');
    t.primary(['tenant_id', 'provider', 'merchant_id', 'supplier_id']);
    t.index(['supplier_id']);
  });
  await knex.raw(`
    create function supplier_merchant_ids_sync() returns trigger language plpgsql as $$
    begin
      if tg_op = 'UPDATE' then
        if new.merchant_ids is not distinct from old.merchant_ids then return null; end if;
        delete from supplier_merchant_ids where supplier_id = new.id;
      end if;
      if jsonb_typeof(new.merchant_ids) = 'object' then
        insert into supplier_merchant_ids (tenant_id, provider, merchant_id, supplier_id)
        select new.tenant_id, m.key, m.value, new.id from jsonb_each_text(new.merchant_ids) m
         where m.value is not null and m.value <> ''
        on conflict do nothing;
      end if;
      return null;
    end $$;
    create trigger suppliers_merchant_ids_sync after insert or update of merchant_ids on suppliers
      for each row execute function supplier_merchant_ids_sync();
  `);
  await knex.raw(`
    insert into supplier_merchant_ids (tenant_id, provider, merchant_id, supplier_id)
    select s.tenant_id, m.key, m.value, s.id
      from suppliers s cross join lateral jsonb_each_text(case when jsonb_typeof(s.merchant_ids) = 'object' then s.merchant_ids else '{}' end) m
     where m.value is not null and m.value <> ''
    on conflict do nothing
  `);
  await knex.raw('drop index if exists suppliers_merchant_ids_idx');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('create index if not exists suppliers_merchant_ids_idx on suppliers using gin (merchant_ids)');
  await knex.raw('drop trigger if exists suppliers_merchant_ids_sync on suppliers');
  await knex.raw('drop function if exists supplier_merchant_ids_sync()');
  await knex.schema.dropTableIfExists('supplier_merchant_ids');
}
