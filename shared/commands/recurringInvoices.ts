import { audit } from '../audit';
import { now } from '../clock';
import { systemActor } from '../actor';
import { todayVienna } from '../domain/dates';
import { checkNotNegative, prepareItems } from '../domain/invoiceChecks';
import type { InvoiceItemInput } from '../domain/invoiceInput';
import { periodAt, periodStart, type Interval, type Schedule } from '../domain/recurrence';
import { invalidInput, unprocessable } from '../errors';
import { loadRecurringRow, recurringView, scheduleOf, type RecurringInvoiceRow, type RecurringInvoiceView } from '../queries/recurringInvoices';
import { createInvoice } from './createInvoice';
import { activeCustomer, loadTenant } from './invoices/references';
import { itemTaxContext } from './invoices/taxContext';
import { sendInvoice } from './sendInvoice';
import type { CommandContext } from './types';
import type { Knex } from 'knex';

/** POST/PUT /api/recurring-invoices (docs/recurring-invoices.md). */
export interface RecurringInvoiceInput {
  customerId: string;
  items: InvoiceItemInput[];
  interval: Interval;
  dayOfMonth?: number | null;
  startDate: string;
  endDate?: string | null;
  autoSend: boolean;
  paymentTermDays?: number | null;
  notes?: string | null;
}

/**
 * The customer must be able to receive invoices (exists, not deleted: 400 on customerId naming
 * the cause) and the items must make a valid invoice for them: the invoice commands' own checks
 * (prepareItems with the same tax context), so a template cannot hold what an invoice would refuse.
 */
async function checkTemplate(ctx: CommandContext, input: RecurringInvoiceInput): Promise<void> {
  const tenantId = ctx.actor.tenantId;
  if (input.endDate && input.endDate < input.startDate)
    throw invalidInput('Invalid recurring invoice', [{ field: 'endDate', message: 'must not be before startDate' }]);
  const customer = await activeCustomer(ctx.trx, tenantId, input.customerId);
  const tenant = await loadTenant(ctx.trx, tenantId);
  const prepared = prepareItems(input.items, tenant.country, itemTaxContext(tenant, customer, false));
  checkNotNegative(prepared.totals);
}

function columns(input: RecurringInvoiceInput) {
  return {
    customerId: input.customerId,
    items: JSON.stringify(input.items.map(({ position: _ignored, ...item }) => item)),
    interval: input.interval,
    dayOfMonth: input.dayOfMonth ?? null,
    startDate: input.startDate,
    endDate: input.endDate ?? null,
    autoSend: input.autoSend,
    paymentTermDays: input.paymentTermDays ?? null,
    notes: input.notes ?? null,
  };
}

/** The next period's index and start from `from` on; ended when endDate leaves none. */
function nextFrom(schedule: Schedule, from: number): { nextPeriod: number; nextDate: string | null; ended: boolean } {
  const p = periodAt(schedule, from);
  return { nextPeriod: from, nextDate: p?.start ?? null, ended: !p };
}

export async function createRecurringInvoice(ctx: CommandContext, input: RecurringInvoiceInput): Promise<RecurringInvoiceView> {
  await checkTemplate(ctx, input);
  const cols = columns(input);
  const next = nextFrom(cols, 0);
  const [row] = (await ctx
    .trx('recurringInvoices')
    .insert({ ...cols, tenantId: ctx.actor.tenantId, nextPeriod: 0, nextDate: next.nextDate, status: next.ended ? 'ended' : 'active' })
    .returning('*')) as RecurringInvoiceRow[];
  await audit(ctx.trx, ctx.actor, { action: 'recurring_invoice.create', entityType: 'recurring_invoice', entityId: row.id });
  return recurringView(row);
}

/**
 * Replace a template. Periods already billed stay billed: the next period is the first one that
 * starts after the last billed period's end under the new schedule (none billed: the first), so
 * a changed calendar never bills a day twice (it may leave the days in between unbilled).
 */
export async function updateRecurringInvoice(ctx: CommandContext, id: string, input: RecurringInvoiceInput): Promise<RecurringInvoiceView> {
  const current = await loadRecurringRow(ctx.trx, ctx.actor.tenantId, id, { forUpdate: true });
  await checkTemplate(ctx, input);
  const cols = columns(input);
  const last = await ctx.trx('recurringInvoicePeriods').where({ recurringInvoiceId: id }).max<{ max: string | null }>('periodEnd as max').first();
  // The first period that starts after the last billed one ends: never billing a day twice (dates grow with k: a short walk).
  let index = 0;
  const lastBilled = last?.max;
  if (lastBilled) while (periodStart(cols, index) <= lastBilled) index++;
  const next = nextFrom(cols, index);
  const status = next.ended ? 'ended' : current.status === 'paused' ? 'paused' : 'active';
  const [row] = (await ctx
    .trx('recurringInvoices')
    .where({ tenantId: ctx.actor.tenantId, id })
    .update({ ...cols, nextPeriod: next.nextPeriod, nextDate: next.nextDate, status, updatedAt: ctx.trx.fn.now() })
    .returning('*')) as RecurringInvoiceRow[];
  await audit(ctx.trx, ctx.actor, { action: 'recurring_invoice.update', entityType: 'recurring_invoice', entityId: id });
  return recurringView(row);
}

/** Soft delete: no further periods; the invoices it made stay, and so does their period record. */
export async function deleteRecurringInvoice(ctx: CommandContext, id: string): Promise<void> {
  await loadRecurringRow(ctx.trx, ctx.actor.tenantId, id, { forUpdate: true });
  await ctx.trx('recurringInvoices').where({ tenantId: ctx.actor.tenantId, id }).update({ deletedAt: ctx.trx.fn.now(), updatedAt: ctx.trx.fn.now() });
  await audit(ctx.trx, ctx.actor, { action: 'recurring_invoice.delete', entityType: 'recurring_invoice', entityId: id });
}

export async function pauseRecurringInvoice(ctx: CommandContext, id: string): Promise<RecurringInvoiceView> {
  const row = await loadRecurringRow(ctx.trx, ctx.actor.tenantId, id, { forUpdate: true });
  if (row.status === 'ended') throw unprocessable('The recurring invoice has ended (endDate passed); there is nothing to pause');
  const [updated] = (await ctx
    .trx('recurringInvoices')
    .where({ tenantId: ctx.actor.tenantId, id })
    .update({ status: 'paused', updatedAt: ctx.trx.fn.now() })
    .returning('*')) as RecurringInvoiceRow[];
  await audit(ctx.trx, ctx.actor, { action: 'recurring_invoice.pause', entityType: 'recurring_invoice', entityId: id });
  return recurringView(updated);
}

/**
 * Resume a paused template. A pause means "do not bill this time": periods that started while it
 * was paused (before today) are skipped, billing goes on with the first period starting today or later.
 */
export async function resumeRecurringInvoice(ctx: CommandContext, id: string): Promise<RecurringInvoiceView> {
  const row = await loadRecurringRow(ctx.trx, ctx.actor.tenantId, id, { forUpdate: true });
  if (row.status === 'ended') throw unprocessable('The recurring invoice has ended (endDate passed); change endDate to go on');
  let next = nextFrom(scheduleOf(row), row.nextPeriod);
  if (row.status === 'paused') {
    const today = todayVienna(now());
    let k = row.nextPeriod;
    while (next.nextDate && next.nextDate < today) next = nextFrom(scheduleOf(row), ++k);
  }
  const [updated] = (await ctx
    .trx('recurringInvoices')
    .where({ tenantId: ctx.actor.tenantId, id })
    .update({ status: next.ended ? 'ended' : 'active', nextPeriod: next.nextPeriod, nextDate: next.nextDate, updatedAt: ctx.trx.fn.now() })
    .returning('*')) as RecurringInvoiceRow[];
  await audit(ctx.trx, ctx.actor, { action: 'recurring_invoice.resume', entityType: 'recurring_invoice', entityId: id });
  return recurringView(updated);
}

/**
 * Bill the template's next period if it is due on asOf: the invoice (a draft with the period as
 * its service period), sent through sendInvoice when autoSend, the period recorded, the template
 * moved on: all in the caller's transaction, with the template row locked, so concurrent runs
 * take turns and a run that dies leaves nothing behind. The period row's primary key
 * (template, period start) refuses a second invoice for the same period whatever happens.
 * Returns the invoice id, 'skipped' for a period found billed already, or null when nothing is due.
 * Runs without a user: the tenant's system actor (shared/actor.ts).
 */
export async function billNextRecurringPeriod(
  { trx }: { trx: Knex.Transaction },
  ref: { tenantId: string; id: string; asOf: string },
): Promise<string | 'skipped' | null> {
  const row = (await trx('recurringInvoices').where({ tenantId: ref.tenantId, id: ref.id }).whereNull('deletedAt').forUpdate().first()) as
    | RecurringInvoiceRow
    | undefined;
  if (row?.status !== 'active' || !row.nextDate || row.nextDate > ref.asOf) return null;
  const schedule = scheduleOf(row);
  const period = periodAt(schedule, row.nextPeriod);
  const following = nextFrom(schedule, row.nextPeriod + 1);
  const advance = {
    nextPeriod: following.nextPeriod,
    nextDate: following.nextDate,
    status: following.ended ? 'ended' : 'active',
    lastRunAt: trx.fn.now(),
    lastError: null,
    lastErrorAt: null,
    updatedAt: trx.fn.now(),
  };
  if (!period) {
    await trx('recurringInvoices')
      .where({ id: row.id })
      .update({ ...advance, status: 'ended', nextDate: null });
    return null;
  }
  const claimed = await trx('recurringInvoicePeriods')
    .insert({ recurringInvoiceId: row.id, tenantId: row.tenantId, periodStart: period.start, periodEnd: period.end })
    .onConflict(['recurringInvoiceId', 'periodStart'])
    .ignore()
    .returning('periodStart');
  if (claimed.length === 0) {
    await trx('recurringInvoices').where({ id: row.id }).update(advance);
    return 'skipped';
  }
  const actor = systemActor(row.tenantId);
  const { id: invoiceId } = await createInvoice(
    { trx, actor },
    {
      type: 'rechnung',
      customerId: row.customerId,
      items: row.items,
      notes: row.notes,
      paymentTermDays: row.paymentTermDays,
      serviceDate: period.start,
      serviceEndDate: period.end,
    },
  );
  await trx('recurringInvoicePeriods').where({ recurringInvoiceId: row.id, periodStart: period.start }).update({ invoiceId });
  if (row.autoSend) await sendInvoice({ trx, actor }, invoiceId, {});
  await trx('recurringInvoices').where({ id: row.id }).update(advance);
  await audit(trx, actor, {
    action: 'recurring_invoice.bill',
    entityType: 'recurring_invoice',
    entityId: row.id,
    data: { invoiceId, periodStart: period.start, periodEnd: period.end },
  });
  return invoiceId;
}

/** A period that could not be billed: the reason on the template (lastError), in a transaction of its own. */
export async function recordRecurringFailure({ trx }: { trx: Knex.Transaction }, ref: { tenantId: string; id: string; message: string }): Promise<void> {
  await trx('recurringInvoices')
    .where({ tenantId: ref.tenantId, id: ref.id })
    .update({ lastError: ref.message.slice(0, 2000), lastErrorAt: trx.fn.now(), lastRunAt: trx.fn.now() });
}
