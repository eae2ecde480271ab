import type { Db } from '../db';
import { notFound } from '../errors';
import type { InvoiceItemInput } from '../domain/invoiceInput';
import { periodsFrom, type Interval, type Period, type Schedule } from '../domain/recurrence';
import { pageEnvelope } from './paging';

/** A recurring invoice template as the API shows it (docs/recurring-invoices.md). */
export interface RecurringInvoiceView {
  id: string;
  customerId: string;
  items: InvoiceItemInput[];
  interval: Interval;
  dayOfMonth: number | null;
  startDate: string;
  endDate: string | null;
  autoSend: boolean;
  paymentTermDays: number | null;
  notes: string | null;
  status: 'active' | 'paused' | 'ended';
  /** The start of the next period to bill (its invoice is made on that day); null once ended. */
  nextDate: string | null;
  lastRunAt: string | null;
  /** Why the last attempt to bill a period failed; null after a success. Retried by the next run. */
  lastError: string | null;
  lastErrorAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface RecurringInvoiceRow extends Omit<RecurringInvoiceView, 'lastRunAt' | 'lastErrorAt' | 'createdAt' | 'updatedAt'> {
  tenantId: string;
  nextPeriod: number;
  lastRunAt: Date | null;
  lastErrorAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
}

const iso = (v: Date | string | null): string | null => (v == null ? null : new Date(v).toISOString());

export function recurringView(r: RecurringInvoiceRow): RecurringInvoiceView {
  return {
    id: r.id,
    customerId: r.customerId,
    items: r.items,
    interval: r.interval,
    dayOfMonth: r.dayOfMonth,
    startDate: r.startDate,
    endDate: r.endDate,
    autoSend: r.autoSend,
    paymentTermDays: r.paymentTermDays,
    notes: r.notes,
    status: r.status,
    nextDate: r.nextDate,
    lastRunAt: iso(r.lastRunAt),
    lastError: r.lastError,
    lastErrorAt: iso(r.lastErrorAt),
    createdAt: iso(r.createdAt)!,
    updatedAt: iso(r.updatedAt)!,
  };
}

export const scheduleOf = (r: Pick<RecurringInvoiceRow, 'interval' | 'dayOfMonth' | 'startDate' | 'endDate'>): Schedule => ({
  interval: r.interval,
  dayOfMonth: r.dayOfMonth,
  startDate: r.startDate,
  endDate: r.endDate,
});

/** A template of this tenant that is not deleted, else 404. */
export async function loadRecurringRow(db: Db, tenantId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<RecurringInvoiceRow> {
  const q = db('recurringInvoices').where({ tenantId, id }).whereNull('deletedAt').first();
  const row = (await (opts.forUpdate ? q.forUpdate() : q)) as RecurringInvoiceRow | undefined;
  if (!row) throw notFound('Recurring invoice');
  return row;
}

export async function getRecurringInvoice(db: Db, tenantId: string, id: string): Promise<RecurringInvoiceView> {
  return recurringView(await loadRecurringRow(db, tenantId, id));
}

export async function listRecurringInvoices(db: Db, tenantId: string, q: { page: number; limit: number }) {
  const base = db('recurringInvoices').where({ tenantId }).whereNull('deletedAt');
  const [{ count }] = await base.clone().count<{ count: string }[]>({ count: '*' });
  const rows = (await base
    .clone()
    .orderBy([{ column: 'createdAt', order: 'desc' }, { column: 'id' }])
    .limit(q.limit)
    .offset((q.page - 1) * q.limit)) as RecurringInvoiceRow[];
  const total = Number(count);
  return { data: rows.map(recurringView), pagination: pageEnvelope(q, total) };
}

/** The next 12 periods still to bill (fewer when endDate comes first; none when paused or ended). */
export async function previewRecurringInvoice(db: Db, tenantId: string, id: string): Promise<Array<{ date: string; periodStart: string; periodEnd: string }>> {
  const row = await loadRecurringRow(db, tenantId, id);
  if (row.status !== 'active') return [];
  return periodsFrom(scheduleOf(row), row.nextPeriod, 12).map((p: Period) => ({ date: p.start, periodStart: p.start, periodEnd: p.end }));
}

/** What a template billed, newest period first: one entry per period, with its invoice. */
export async function listRecurringInvoicePeriods(db: Db, tenantId: string, id: string, q: { page: number; limit: number }) {
  await loadRecurringRow(db, tenantId, id);
  const base = db('recurringInvoicePeriods as p').where({ 'p.tenantId': tenantId, 'p.recurringInvoiceId': id });
  const [{ count }] = await base.clone().count<{ count: string }[]>({ count: '*' });
  const rows = await base
    .clone()
    .leftJoin('invoices as i', function () {
      this.on('i.id', 'p.invoiceId').andOn('i.tenantId', 'p.tenantId');
    })
    .orderBy('p.periodStart', 'desc')
    .limit(q.limit)
    .offset((q.page - 1) * q.limit)
    .select('p.periodStart', 'p.periodEnd', 'p.invoiceId', 'i.number', 'i.status', 'i.totalGross', 'i.issueDate', 'i.deletedAt', 'p.createdAt');
  const total = Number(count);
  return {
    data: rows.map((r) => ({
      periodStart: r.periodStart as string,
      periodEnd: r.periodEnd as string,
      invoiceId: (r.invoiceId as string | null) ?? null,
      number: (r.number as string | null) ?? null,
      status: (r.status as string | null) ?? null,
      totalGross: r.totalGross == null ? null : String(r.totalGross),
      issueDate: (r.issueDate as string | null) ?? null,
      deleted: r.deletedAt != null,
      createdAt: iso(r.createdAt as Date)!,
    })),
    pagination: pageEnvelope(q, total),
  };
}

/** Templates across all tenants with a period due on or before asOf (the run's work list). */
export async function dueRecurringInvoices(db: Db, asOf: string, tenantId?: string): Promise<Array<{ id: string; tenantId: string }>> {
  const q = db('recurringInvoices').whereNull('deletedAt').where('status', 'active').where('nextDate', '<=', asOf).orderBy('nextDate').select('id', 'tenantId');
  if (tenantId) q.where({ tenantId });
  return q;
}
