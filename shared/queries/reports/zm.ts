import type { Knex } from 'knex';
import type { TaxPeriod } from '../../domain/tax/period';
import { computeZm, type ZmInputRow, type ZmResult } from '../../domain/tax/zm';
import { invalidInput } from '../../errors';
import { buildZmXml } from '../../formats/zm/zmXml';
import { assertEurDocuments } from './currency';
import {
  DOC_GROUP_SQL,
  eurSumSql,
  SALES_CATEGORY_SQL,
  SALES_IN_PERIOD_SQL,
  SIGNED_NET_SQL,
  salesCategoryBindings,
  salesInPeriodBindings,
} from './vatAggregates';
import { type ReportTenant, requireTaxNumber } from './vatReturn';

/**
 * The recapitulative statement (ZM) from the period's finalized sales, selected and dated as for
 * the U30/UStVA (rechnung − gutschrift by issueDate, a cancelled invoice's credit note reverses it):
 * lines under intraCommunitySupply are supplies, under reverseCharge services (legacy lines without
 * a category inferred as the returns infer them), per buyer VAT ID of the customer snapshot.
 */
export interface ZmReport extends ZmResult {
  form: 'ZM';
  period: TaxPeriod;
  currency: 'EUR';
}

export async function zmRows(db: Knex, tenant: Pick<ReportTenant, 'id' | 'country'>, period: TaxPeriod): Promise<ZmInputRow[]> {
  // Hand-written GROUP BY over the period's lines, like the VAT return aggregates.
  const { rows } = await db.raw(
    `select d."vatId", d."kind", sum(d.net)::text as "net"
       from (select i.customer_snapshot->>'vatId' as "vatId",
            case ${SALES_CATEGORY_SQL} when 'intraCommunitySupply' then 'supplies' else 'services' end as "kind",
            ${eurSumSql(SIGNED_NET_SQL)} as net
       from invoices i
       join invoice_items ii on ii.invoice_id = i.id
      where ${SALES_IN_PERIOD_SQL}
        and ${SALES_CATEGORY_SQL} in ('intraCommunitySupply', 'reverseCharge')
        and coalesce(i.customer_snapshot->>'vatId', '') <> ''
      group by ${DOC_GROUP_SQL}, 1, 2) d
      group by 1, 2
      order by 1, 2`,
    [...salesCategoryBindings(tenant.country), ...salesInPeriodBindings(tenant.id, period.start, period.end), ...salesCategoryBindings(tenant.country)],
  );
  return rows as ZmInputRow[];
}

export async function zmReport(db: Knex, tenant: ReportTenant, period: TaxPeriod): Promise<ZmReport> {
  await assertEurDocuments(db, tenant.id, { from: period.start, to: period.end }, `The ZM for ${period.label}`);
  const zm = computeZm(await zmRows(db, tenant, period));
  return { form: 'ZM', period, ...zm, currency: 'EUR' };
}

/**
 * The FinanzOnline upload (U13) for an Austrian tenant. German tenants file the ZM with the BZSt
 * (BZStOnline-Portal form, CSV import or ELMA), none of which is produced yet: 400 says so.
 */
export function zmXmlFor(tenant: ReportTenant, report: ZmReport, opts: { createdAt?: Date } = {}): Buffer {
  if (tenant.country !== 'AT') {
    throw invalidInput(
      tenant.country === 'DE'
        ? 'German tenants file the ZM with the BZSt (BZStOnline-Portal, CSV import or ELMA); that file is not produced yet: use format=json and enter the lines in the BZStOnline-Portal'
        : `The ZM upload file is produced for Austrian tenants (FinanzOnline); this tenant's country is ${tenant.country}`,
      [{ field: 'format', message: 'xml is available for Austrian (AT) tenants only' }],
    );
  }
  const taxNumber = requireTaxNumber(tenant, 'The ZM XML');
  return buildZmXml({ period: report.period, taxNumber, zm: report, createdAt: opts.createdAt });
}
