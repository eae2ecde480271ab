/**
 * Bulk seeding for the report and list benchmarks: N invoices for one tenant with generate_series
 * (90 % sales, 10 % incoming, one item each, every tenth sale paid), plus N/10 invoices of another
 * tenant whose rows must not slow the first tenant's queries down. Runs on its own connection
 * without the service's 30 s statement timeout, in one transaction; takes about a minute per
 * million rows on 2 cores.
 */
import pg from 'pg';
import type { Knex } from 'knex';

export interface SeededTenant {
  tenantId: string;
  customerId: string;
  supplierId: string;
  total: number;
  sales: number;
  incoming: number;
}

export async function seedInvoices(url: string, k: Knex, total: number): Promise<SeededTenant> {
  const sales = Math.round(total * 0.9);
  const incoming = total - sales;
  const [tenant] = await k('tenants').insert({ name: 'Bench GmbH', country: 'AT', taxNumber: '12-345/6789', vatId: 'ATU12345678' }).returning('id');
  const [other] = await k('tenants').insert({ name: 'Other GmbH', country: 'AT' }).returning('id');
  const [customer] = await k('customers').insert({ tenantId: tenant.id, name: 'Kunde' }).returning('id');
  const [supplier] = await k('suppliers').insert({ tenantId: tenant.id, name: 'Lieferant', defaultExpenseAccount: '7600' }).returning('id');

  const seeder = new pg.Client({ connectionString: url });
  await seeder.connect();
  const seed = async (sql: string, bindings: unknown[] = []) => {
    let i = 0;
    await seeder.query(
      sql.replace(/\?/g, () => `$${++i}`),
      bindings,
    );
  };
  try {
    // One transaction: items and payments written after their invoices in another transaction
    // would touch every invoice again (the view triggers of migration 20261126090000), leaving a
    // million dead row versions that the list and report benchmarks would then read around.
    await seed('begin');
    await seed(
      `with s as (
         select g, date '2026-01-01' + (g % 365) as d, ((g % 997) + 1)::numeric(14,2) as net,
                case when g % 20 = 0 then 0 when g % 3 = 0 then 10 when g % 7 = 0 then 13 else 20 end as rate
           from generate_series(1, ?::int) g)
       insert into invoices (tenant_id, type, status, number, customer_id, customer_snapshot, issue_date, due_date,
                             total_net, total_tax, total_gross, amount_paid, tax_breakdown, finalized_at)
       select ?, case when g % 50 = 0 then 'gutschrift' else 'rechnung' end,
              case when g % 10 = 0 then 'bezahlt' when g % 101 = 0 then 'entwurf' else 'offen' end,
              'RE-2026-' || g, ?,
              case when g % 20 = 0 then '{"name":"EU Kunde","vatId":"DE123456789"}'::jsonb else '{"name":"Inland Kunde"}'::jsonb end,
              d, d, net, round(net * rate / 100, 2), net + round(net * rate / 100, 2),
              case when g % 10 = 0 then net + round(net * rate / 100, 2) else 0 end,
              jsonb_build_array(jsonb_build_object('taxRate', rate::text, 'net', net::text, 'tax', round(net * rate / 100, 2)::text)), now()
         from s`,
      [sales, tenant.id, customer.id],
    );
    await seed(
      `with s as (select g, date '2026-01-01' + (g % 365) as d, ((g % 499) + 1)::numeric(14,2) as net,
                         case when g % 4 = 0 then 10 else 20 end as rate from generate_series(1, ?::int) g)
       insert into invoices (tenant_id, type, status, supplier_id, invoice_number, invoice_date, issue_date,
                             total_net, total_tax, total_gross, tax_breakdown, finalized_at)
       select ?, 'eingangsrechnung', case when g % 30 = 0 then 'storniert' else 'offen' end, ?, 'ER-' || g, d, d,
              net, round(net * rate / 100, 2), net + round(net * rate / 100, 2),
              jsonb_build_array(jsonb_build_object('taxRate', rate::text, 'net', net::text, 'tax', round(net * rate / 100, 2)::text)), now()
         from s`,
      [incoming, tenant.id, supplier.id],
    );
    await seed(
      `insert into invoice_items (tenant_id, invoice_id, position, description, quantity, unit_price, tax_rate, net_amount, tax_amount, gross_amount)
       select tenant_id, id, 1, 'Leistung', 1, total_net, (tax_breakdown->0->>'taxRate')::numeric, total_net, total_tax, total_gross
         from invoices where tenant_id = ?`,
      [tenant.id],
    );
    await seed(
      `insert into payments (tenant_id, invoice_id, amount, date, method)
       select tenant_id, id, total_gross, issue_date, 'bank_transfer' from invoices where tenant_id = ? and status = 'bezahlt' and total_gross > 0`,
      [tenant.id],
    );
    await seed(
      `insert into invoices (tenant_id, type, status, issue_date, total_net, total_tax, total_gross, tax_breakdown)
       select ?, 'rechnung', 'offen', date '2026-01-01' + (g % 365), 100, 20, 120, '[{"taxRate":"20","net":"100.00","tax":"20.00"}]'
         from generate_series(1, ?::int) g`,
      [other.id, Math.round(total / 10)],
    );
    await seed('commit');
    await seed('analyze');
  } finally {
    await seeder.end();
  }
  return { tenantId: tenant.id, customerId: customer.id, supplierId: supplier.id, total, sales, incoming };
}
