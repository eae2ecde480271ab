import type { Db } from '../db';
import { notFound } from '../errors';
import { dec, fmtMoney } from '../domain/money';
import { addDays } from '../domain/dates';
import type { CustomerSnapshot } from '../models/Invoice';
import type { TenantSettingsJson } from '../models/Tenant';
import { customerTypeOf, type BaseRate, type CustomerType } from '../domain/dunning/interest';
import {
  DEFAULT_DUNNING_SETTINGS,
  nextLevel,
  noticeAmounts,
  type DunningNoticeContent,
  type DunningSettings,
  type IssuedNotice,
  type NoticeAmounts,
} from '../domain/dunning/levels';

/** Reads of dunning (docs/dunning.md): base rates, overdue invoices with their notices, proposals, notices. */

export async function loadBaseRates(db: Db, country: string): Promise<BaseRate[]> {
  const rows: { validFrom: string; rate: string }[] = await db('base_rates').where({ country }).orderBy('validFrom').select('validFrom', 'rate');
  return rows.map((r) => ({ validFrom: r.validFrom, rate: dec(r.rate).toFixed(2) }));
}

export interface DunningTenant {
  id: string;
  name: string;
  country: string;
  address: string | null;
  vatId: string | null;
  iban: string | null;
  bic: string | null;
  email: string | null;
  dunning: DunningSettings;
}

export async function loadDunningTenant(db: Db, tenantId: string): Promise<DunningTenant> {
  const t: (Omit<DunningTenant, 'dunning'> & { settings: TenantSettingsJson | null }) | undefined = await db('tenants')
    .where({ id: tenantId })
    .first('id', 'name', 'country', 'address', 'vatId', 'iban', 'bic', 'email', 'settings');
  if (!t) throw notFound('Tenant');
  const { settings, ...rest } = t;
  return { ...rest, dunning: settings?.dunning ?? DEFAULT_DUNNING_SETTINGS };
}

/** An open, overdue-able sales invoice and what dunning needs of its customer. */
export interface DunningCandidate {
  id: string;
  number: string;
  issueDate: string;
  dueDate: string;
  currency: string;
  totalGross: string;
  amountPaid: string;
  amountDue: string;
  customerSnapshot: CustomerSnapshot | null;
  customerType: CustomerType;
  email: string | null;
}

/**
 * Invoices dunning looks at: finalized sales invoices (rechnung) still open or partly paid, with
 * a due date, in EUR (fees and the EUR 40 lump sum are euro amounts), not deleted. Paid or
 * cancelled invoices drop out here, which is what stops their dunning.
 */
export async function dunningCandidates(db: Db, tenantId: string, opts: { invoiceId?: string; dueBefore?: string } = {}): Promise<DunningCandidate[]> {
  const q = db('invoices as i')
    .leftJoin('customers as c', function () {
      this.on('c.id', '=', 'i.customerId').andOn('c.tenantId', '=', 'i.tenantId');
    })
    .where({ 'i.tenantId': tenantId, 'i.type': 'rechnung', 'i.currency': 'EUR' })
    .whereIn('i.status', ['offen', 'teilbezahlt'])
    .whereNotNull('i.dueDate')
    .whereNotNull('i.number')
    .whereNull('i.deletedAt')
    .select(
      'i.id',
      'i.number',
      'i.issueDate',
      'i.dueDate',
      'i.currency',
      'i.totalGross',
      'i.amountPaid',
      'i.customerSnapshot',
      'c.customerType',
      'c.vatId as customerVatId',
      'c.company as customerCompany',
      'c.email as customerEmail',
    )
    .orderBy([{ column: 'i.dueDate' }, { column: 'i.number' }]);
  if (opts.invoiceId) q.where('i.id', opts.invoiceId);
  if (opts.dueBefore) q.where('i.dueDate', '<', opts.dueBefore);
  const rows: Array<Record<string, unknown>> = await q;
  return rows
    .map((r) => {
      const snap = (r.customerSnapshot as CustomerSnapshot | null) ?? null;
      const amountDue = fmtMoney(dec(r.totalGross as string).minus(r.amountPaid as string));
      return {
        id: r.id as string,
        number: r.number as string,
        issueDate: r.issueDate as string,
        dueDate: r.dueDate as string,
        currency: r.currency as string,
        totalGross: fmtMoney(r.totalGross as string),
        amountPaid: fmtMoney(r.amountPaid as string),
        amountDue,
        customerSnapshot: snap,
        // The customer's flag; else the VAT id / company as the invoice froze them (or the live customer's).
        customerType: customerTypeOf({
          customerType: (r.customerType as CustomerType | null) ?? null,
          vatId: snap ? snap.vatId : (r.customerVatId as string | null),
          company: snap ? snap.company : (r.customerCompany as string | null),
        }),
        email: snap?.email ?? (r.customerEmail as string | null) ?? null,
      };
    })
    .filter((c) => dec(c.amountDue).gt(0));
}

export type IssuedNoticeRow = IssuedNotice & { id: string; number: string };

export async function issuedNoticesOf(db: Db, tenantId: string, invoiceIds: string[]): Promise<Map<string, IssuedNoticeRow[]>> {
  const out = new Map<string, IssuedNoticeRow[]>();
  if (!invoiceIds.length) return out;
  const rows: Array<IssuedNoticeRow & { invoiceId: string }> = await db('dunning_notices')
    .where({ tenantId })
    .whereIn('invoiceId', invoiceIds)
    .orderBy('level')
    .select('id', 'invoiceId', 'number', 'level', 'issueDate', 'interestTo', 'fee', 'interest', 'lumpSumCharged');
  for (const r of rows) {
    const list = out.get(r.invoiceId) ?? [];
    list.push({ ...r, fee: fmtMoney(r.fee), interest: fmtMoney(r.interest) });
    out.set(r.invoiceId, list);
  }
  return out;
}

export interface NoticePlan {
  level: number;
  dueOn: string;
  amounts: NoticeAmounts;
}

/** The invoice's next level and what it would claim on asOf, or null when every level was issued. */
export function planNotice(t: DunningTenant, c: DunningCandidate, issued: IssuedNotice[], baseRates: BaseRate[], asOf: string): NoticePlan | null {
  const next = nextLevel(t.dunning.levels, c.dueDate, issued);
  if (!next) return null;
  const amounts = noticeAmounts({
    level: next.level,
    settings: t.dunning.levels[next.level - 1],
    tenantCountry: t.country,
    customerType: c.customerType,
    amountDue: c.amountDue,
    dueDate: c.dueDate,
    // A preview before the level's day shows what the notice would claim on that day.
    asOf: asOf < next.dueOn ? next.dueOn : asOf,
    issued,
    baseRates,
  });
  return { ...next, amounts };
}

export interface DunningProposal {
  invoiceId: string;
  invoiceNumber: string;
  dueDate: string;
  amountDue: string;
  level: number;
  fee: string;
  interest: string;
  totalDue: string;
}

/**
 * The notices due by asOf (default today): each open invoice whose next level's day has come,
 * with the fee, interest through asOf and total it would claim. Nothing while dunning is off.
 * An invoice whose interest cannot be computed (no base rate known for its time) is left out
 * here and refused with the reason when issued.
 */
export async function dunningProposals(db: Db, tenantId: string, asOf: string): Promise<DunningProposal[]> {
  const tenant = await loadDunningTenant(db, tenantId);
  if (!tenant.dunning.enabled || !tenant.dunning.levels.length) return [];
  const firstDays = tenant.dunning.levels[0].daysAfterDue;
  const candidates = (await dunningCandidates(db, tenantId)).filter((c) => c.dueDate < asOf && addDays(c.dueDate, firstDays) <= asOf);
  const issued = await issuedNoticesOf(
    db,
    tenantId,
    candidates.map((c) => c.id),
  );
  const baseRates = await loadBaseRates(db, tenant.country);
  const out: DunningProposal[] = [];
  for (const c of candidates) {
    let plan: NoticePlan | null;
    try {
      plan = planNotice(tenant, c, issued.get(c.id) ?? [], baseRates, asOf);
    } catch {
      continue;
    }
    if (!plan || plan.dueOn > asOf) continue;
    out.push({
      invoiceId: c.id,
      invoiceNumber: c.number,
      dueDate: c.dueDate,
      amountDue: c.amountDue,
      level: plan.level,
      fee: plan.amounts.fee,
      interest: plan.amounts.interest,
      totalDue: plan.amounts.totalDue,
    });
  }
  return out;
}

export type DeliveryState = 'queued' | 'sending' | 'sent' | 'failed' | 'none';

export interface DunningNoticeView {
  id: string;
  number: string;
  level: number;
  issuedAt: string;
  fee: string;
  interest: string;
  totalDue: string;
  /** The notice's e-mail: its delivery's status, or none (no e-mail address, or not sent). */
  deliveryStatus: DeliveryState;
}

const noticeColumns = ['n.id', 'n.number', 'n.level', 'n.issuedAt', 'n.fee', 'n.interest', 'n.totalDue', 'd.status as deliveryStatus'];

const toView = (r: Record<string, unknown>): DunningNoticeView => ({
  id: r.id as string,
  number: r.number as string,
  level: r.level as number,
  issuedAt: (r.issuedAt as Date).toISOString(),
  fee: fmtMoney(r.fee as string),
  interest: fmtMoney(r.interest as string),
  totalDue: fmtMoney(r.totalDue as string),
  deliveryStatus: ((r.deliveryStatus as DeliveryState | null) ?? 'none') as DeliveryState,
});

/** The invoice's notices, level by level; 404 for an invoice that is not the tenant's. */
export async function listInvoiceNotices(db: Db, tenantId: string, invoiceId: string): Promise<DunningNoticeView[]> {
  const invoice = await db('invoices').where({ tenantId, id: invoiceId }).whereNull('deletedAt').first('id');
  if (!invoice) throw notFound('Invoice');
  const rows = await db('dunning_notices as n')
    .leftJoin('deliveries as d', function () {
      this.on('d.dunningNoticeId', '=', 'n.id').andOn('d.tenantId', '=', 'n.tenantId');
    })
    .where({ 'n.tenantId': tenantId, 'n.invoiceId': invoiceId })
    .orderBy('n.level')
    .select(noticeColumns);
  return rows.map(toView);
}

export async function loadDunningNotice(
  db: Db,
  tenantId: string,
  id: string,
): Promise<DunningNoticeView & { invoiceId: string; content: DunningNoticeContent }> {
  const row = await db('dunning_notices as n')
    .leftJoin('deliveries as d', function () {
      this.on('d.dunningNoticeId', '=', 'n.id').andOn('d.tenantId', '=', 'n.tenantId');
    })
    .where({ 'n.tenantId': tenantId, 'n.id': id })
    .first([...noticeColumns, 'n.invoiceId', 'n.content']);
  if (!row) throw notFound('Dunning notice');
  return { ...toView(row), invoiceId: row.invoiceId, content: row.content };
}

/** Tenants whose daily run issues notices (all tenants: the scheduler's fan-out, reference data of no tenant). */
export async function tenantsWithAutomaticDunning(db: Db): Promise<string[]> {
  const rows: { id: string }[] = await db('tenants')
    .whereRaw("(settings->'dunning'->>'enabled')::boolean is true")
    .whereRaw("(settings->'dunning'->>'automatic')::boolean is true")
    .select('id');
  return rows.map((r) => r.id);
}
