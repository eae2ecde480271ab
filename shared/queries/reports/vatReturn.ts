import type { Knex } from 'knex';
import type { ModelObject } from 'objection';
import type { Tenant } from '../../models/Tenant';
import { invalidInput, notFound } from '../../errors';
import type { TaxPeriod } from '../../domain/tax/period';
import { computeU30, type U30Result } from '../../domain/tax/u30';
import { computeUstvaDe, type UstvaKennzahlen } from '../../domain/tax/ustvaDe';
import { buildU30Xml } from '../../formats/u30/u30Xml';
import { buildElsterUstvaXml } from '../../formats/elster/ustvaXml';
import { loadVatAggregates } from './vatAggregates';
import { assertEurDocuments } from './currency';

/**
 * VAT return reports built from the SQL aggregates and the pure tax modules:
 * Austrian tenants get the U30 (FinanzOnline), German tenants the UStVA (ELSTER).
 */
export type ReportTenant = Pick<
  ModelObject<Tenant>,
  'id' | 'name' | 'country' | 'taxNumber' | 'vatId' | 'address' | 'email' | 'currency' | 'settings' | 'portalCredentialsEnc'
>;

export async function loadReportTenant(db: Knex, tenantId: string): Promise<ReportTenant> {
  // Plain knex row of the columns reports use: a report reads, it does not change the tenant.
  const t: ReportTenant | undefined = await db('tenants')
    .where({ id: tenantId })
    .first('id', 'name', 'country', 'taxNumber', 'vatId', 'address', 'email', 'currency', 'settings', 'portalCredentialsEnc');
  if (!t) throw notFound('Tenant');
  return { ...t, settings: t.settings ?? {} };
}

/** The JSON U30: the domain's result for the period (shared/domain/tax/u30.ts). */
export type U30Report = U30Result & { form: 'U30'; period: TaxPeriod; currency: 'EUR' };

export interface UstvaReport {
  form: 'UStVA';
  period: TaxPeriod;
  kennzahlen: UstvaKennzahlen;
  salesByRate: Array<{ taxRate: string; net: string; tax: string }>;
  outputTax: string;
  inputTax: string;
  payable: string;
  unclassifiedZeroRatedNet: string;
  currency: 'EUR';
}

export type VatReturnReport = U30Report | UstvaReport;

const RETURNS = {
  AT: { form: 'U30', country: 'Austrian', route: '/api/reports/ust', label: 'the U30 is the Austrian VAT return' },
  DE: { form: 'ELSTER UStVA', country: 'German', route: '/api/reports/elster', label: 'ELSTER UStVA is the German VAT return' },
} as const;

/** 400 unless the tenant files the given country's VAT return; points to the other one where it fits. */
function assertReturnCountry(tenant: ReportTenant, files: 'AT' | 'DE'): void {
  if (tenant.country === files) return;
  const mine = RETURNS[files];
  const other = tenant.country === 'AT' || tenant.country === 'DE' ? RETURNS[tenant.country] : null;
  if (other) {
    throw invalidInput(`${mine.label[0].toUpperCase()}${mine.label.slice(1)}; ${other.country} tenants file the ${other.form}: use GET ${other.route}`, [
      { field: 'country', message: `${mine.form} needs a ${mine.country} (${files}) tenant; see ${other.route}` },
    ]);
  }
  throw invalidInput(`VAT returns are produced for Austrian (U30) and German (UStVA) tenants; this tenant's country is ${tenant.country}`, [
    { field: 'country', message: 'must be AT or DE' },
  ]);
}

/** 400 unless the tenant files the Austrian U30. */
export const assertU30Tenant = (tenant: ReportTenant) => assertReturnCountry(tenant, 'AT');
/** 400 unless the tenant files the German UStVA. */
export const assertUstvaTenant = (tenant: ReportTenant) => assertReturnCountry(tenant, 'DE');

export function requireTaxNumber(tenant: ReportTenant, what: string): string {
  const n = tenant.taxNumber?.trim();
  if (!n) {
    throw invalidInput(`${what} needs the company's tax number (Steuernummer): set taxNumber with PUT /api/settings`, [
      { field: 'taxNumber', message: 'is not set in the settings' },
    ]);
  }
  return n;
}

/** The period's aggregates, after making sure every document in them is in EUR (422 otherwise). */
async function eurAggregates(db: Knex, tenant: ReportTenant, period: TaxPeriod, what: string) {
  await assertEurDocuments(db, tenant.id, { from: period.start, to: period.end }, what);
  return loadVatAggregates(db, tenant, period);
}

/** JSON VAT return: U30 for AT tenants, UStVA figures for DE tenants. */
export async function vatReturnReport(db: Knex, tenant: ReportTenant, period: TaxPeriod): Promise<VatReturnReport> {
  if (tenant.country !== 'DE') assertU30Tenant(tenant);
  const agg = await eurAggregates(db, tenant, period, `The ${tenant.country === 'DE' ? 'UStVA' : 'U30'} for ${period.label}`);
  if (tenant.country === 'DE') {
    const r = computeUstvaDe(agg);
    return {
      form: 'UStVA',
      period,
      kennzahlen: r.kennzahlen,
      salesByRate: r.salesByRate,
      outputTax: r.exactOutputTax,
      inputTax: r.inputTax,
      payable: r.payable,
      unclassifiedZeroRatedNet: r.unclassifiedZeroRatedNet,
      currency: 'EUR',
    };
  }
  return { form: 'U30', period, ...computeU30(agg), currency: 'EUR' };
}

export async function u30Report(db: Knex, tenant: ReportTenant, period: TaxPeriod): Promise<U30Report> {
  assertU30Tenant(tenant);
  return (await vatReturnReport(db, tenant, period)) as U30Report;
}

/** The FinanzOnline upload file (ISO-8859-1) for a U30 report. */
export function u30XmlFor(tenant: ReportTenant, report: U30Report, opts: { createdAt?: Date; customerInfo?: string } = {}): Buffer {
  assertU30Tenant(tenant);
  const taxNumber = requireTaxNumber(tenant, 'The U30 XML');
  return buildU30Xml({
    period: report.period,
    taxNumber,
    kennzahlen: report.kennzahlen,
    createdAt: opts.createdAt,
    customerInfo: opts.customerInfo,
  });
}

/** "Street 1\n1010 Wien" → street, postal code, city (for the ELSTER Datenlieferant). */
export function splitAddress(address: string | null): { street: string; postalCode: string; city: string } {
  const lines = (address ?? '')
    .split(/\r?\n|,\s*/)
    .map((l) => l.trim())
    .filter(Boolean);
  let street = lines[0] ?? '';
  let postalCode = '';
  let city = '';
  for (const line of lines.slice(1)) {
    const m = /^(?:[A-Z]{1,2}-)?(\d{4,5})\s+(.+)$/.exec(line);
    if (m) {
      postalCode = m[1];
      city = m[2];
      break;
    }
  }
  if (!postalCode && lines.length === 1) street = lines[0];
  return { street, postalCode, city };
}

/** ELSTER UStVA XML (ISO-8859-15) for a German tenant and period. */
export async function elsterXml(db: Knex, tenant: ReportTenant, period: TaxPeriod, opts: { createdAt?: Date } = {}): Promise<Buffer> {
  assertUstvaTenant(tenant);
  const steuernummer = requireTaxNumber(tenant, 'The ELSTER UStVA');
  const agg = await eurAggregates(db, tenant, period, `The ELSTER UStVA for ${period.label}`);
  const r = computeUstvaDe(agg);
  const addr = splitAddress(tenant.address);
  if (!addr.street || !addr.postalCode || !addr.city) {
    throw invalidInput('The ELSTER Datenlieferant needs the company address as "Street\\nPostal code City": set address with PUT /api/settings', [
      { field: 'address', message: 'needs street, postal code and city' },
    ]);
  }
  return buildElsterUstvaXml({
    year: period.year,
    period,
    steuernummer,
    kennzahlen: r.kennzahlen,
    unclassifiedZeroRatedNet: r.unclassifiedZeroRatedNet,
    company: { name: tenant.name, ...addr, email: tenant.email ?? undefined },
    createdAt: opts.createdAt,
  });
}
