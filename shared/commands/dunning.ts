import { audit } from '../audit';
import { notFound, unprocessable } from '../errors';
import { addDays, yearOf } from '../domain/dates';
import { dunningLaw } from '../domain/dunning/interest';
import { dunningNoticeNumber, PAY_WITHIN_DAYS, renderDunningTemplate, type DunningNoticeContent } from '../domain/dunning/levels';
import {
  dunningCandidates,
  issuedNoticesOf,
  listInvoiceNotices,
  loadBaseRates,
  loadDunningTenant,
  planNotice,
  type DunningNoticeView,
} from '../queries/dunning';
import { queueEmailDelivery } from './emailDelivery';
import type { CommandContext } from './types';

/**
 * Issue the next dunning level of one invoice on `asOf` (docs/dunning.md): the notice with its
 * own number, fee and interest (receivables of their own: the invoice is not changed), and its
 * e-mail through the invoice delivery pipeline when the customer has an address. The invoice row
 * is locked first, so a click and the daily run (or two workers) take turns; the second finds the
 * level issued and the next one not due. The unique (invoice, level) index is the last guard.
 *
 * `ifDue`: the daily run's mode: an invoice not due for a level returns null instead of 422.
 */
export async function issueDunningNotice(
  { trx, actor }: CommandContext,
  input: { invoiceId: string; asOf: string; ifDue?: boolean },
): Promise<DunningNoticeView | null> {
  const { tenantId } = actor;
  const locked = await trx('invoices').where({ tenantId, id: input.invoiceId }).whereNull('deletedAt').forUpdate().first('id', 'status', 'type');
  // The same answer as for another tenant's invoice: 404, nothing about its existence.
  if (!locked) throw notFound('Invoice');
  const tenant = await loadDunningTenant(trx, tenantId);
  if (!tenant.dunning.enabled || !tenant.dunning.levels.length) {
    throw unprocessable('Dunning is not enabled: set PUT /api/settings {dunning: {enabled: true, levels: [...]}} first');
  }
  const [candidate] = await dunningCandidates(trx, tenantId, { invoiceId: input.invoiceId });
  if (!candidate) {
    if (input.ifDue) return null;
    const why =
      locked.status === 'bezahlt'
        ? 'it is paid'
        : locked.type !== 'rechnung'
          ? 'only sales invoices are dunned'
          : `it is not an open EUR invoice with a due date (status ${locked.status})`;
    throw unprocessable(`The invoice is not dunned: ${why}`);
  }
  const issued = (await issuedNoticesOf(trx, tenantId, [candidate.id])).get(candidate.id) ?? [];
  const baseRates = await loadBaseRates(trx, tenant.country);
  const plan = planNotice(tenant, candidate, issued, baseRates, input.asOf);
  if (!plan) {
    if (input.ifDue) return null;
    throw unprocessable(`Every dunning level (${tenant.dunning.levels.length}) of invoice ${candidate.number} has been issued`);
  }
  if (plan.dueOn > input.asOf) {
    if (input.ifDue) return null;
    throw unprocessable(`Invoice ${candidate.number} is not yet due for dunning level ${plan.level}: from ${plan.dueOn}`, {
      level: plan.level,
      dueOn: plan.dueOn,
    });
  }

  const res = await trx.raw(
    `insert into dunning_number_sequences (tenant_id, year, last_value) values (?, ?, 1)
     on conflict (tenant_id, year) do update set last_value = dunning_number_sequences.last_value + 1
     returning last_value`,
    [tenantId, yearOf(input.asOf)],
  );
  const counter = Number((res.rows[0] as { lastValue?: number; last_value?: number }).lastValue ?? (res.rows[0] as { last_value?: number }).last_value);
  const number = dunningNoticeNumber(yearOf(input.asOf), counter);
  const { amounts } = plan;
  const snap = candidate.customerSnapshot;
  const content: DunningNoticeContent = {
    number,
    level: plan.level,
    issueDate: input.asOf,
    law: dunningLaw(tenant.country),
    customerType: candidate.customerType,
    seller: { name: tenant.name, address: tenant.address, vatId: tenant.vatId, iban: tenant.iban, bic: tenant.bic, email: tenant.email },
    customer: { name: snap?.name ?? '', company: snap?.company ?? null, address: snap?.address ?? null },
    invoice: {
      number: candidate.number,
      issueDate: candidate.issueDate,
      dueDate: candidate.dueDate,
      totalGross: candidate.totalGross,
      amountPaid: candidate.amountPaid,
      amountDue: candidate.amountDue,
      currency: candidate.currency,
    },
    earlier: issued.map((n) => ({ number: n.number, level: n.level, fee: n.fee, interest: n.interest })),
    fee: amounts.fee,
    lumpSum: amounts.lumpSumCharged ? '40.00' : '0.00',
    interest: amounts.interest,
    periods: amounts.periods,
    totalDue: amounts.totalDue,
    payBy: addDays(input.asOf, PAY_WITHIN_DAYS),
  };
  const [row] = await trx('dunning_notices')
    .insert({
      tenantId,
      invoiceId: candidate.id,
      level: plan.level,
      number,
      issueDate: input.asOf,
      amountDue: candidate.amountDue,
      fee: amounts.fee,
      interest: amounts.interest,
      totalDue: amounts.totalDue,
      lumpSumCharged: amounts.lumpSumCharged,
      interestFrom: amounts.interestFrom,
      interestTo: amounts.interestTo,
      content: JSON.stringify(content),
      createdBy: actor.userId,
    })
    .onConflict(['invoiceId', 'level'])
    .ignore()
    .returning('id');
  if (!row) {
    // Unreachable while the invoice lock is held; a second writer must not fail the run, only skip.
    if (input.ifDue) return null;
    throw unprocessable(`Dunning level ${plan.level} of invoice ${candidate.number} has just been issued`);
  }

  if (candidate.email) {
    const level = tenant.dunning.levels[plan.level - 1];
    const vars = {
      customerName: snap?.company || snap?.name || '',
      invoiceNumber: candidate.number,
      noticeNumber: number,
      level: plan.level,
      dueDate: candidate.dueDate,
      amountDue: candidate.amountDue,
      fee: amounts.fee,
      interest: amounts.interest,
      totalDue: amounts.totalDue,
      companyName: tenant.name,
    };
    await queueEmailDelivery(
      { trx, actor },
      {
        invoiceId: candidate.id,
        to: candidate.email,
        subject: renderDunningTemplate(level.emailSubject, vars).slice(0, 500),
        message: renderDunningTemplate(level.emailBody, vars),
        attachment: { format: 'pdf', source: 'default' },
        dunningNoticeId: row.id,
      },
    );
  }
  await audit(trx, actor, {
    action: 'dunning.issued',
    entityType: 'invoice',
    entityId: candidate.id,
    data: { noticeId: row.id, number, level: plan.level, fee: amounts.fee, interest: amounts.interest, totalDue: amounts.totalDue },
  });
  const views = await listInvoiceNotices(trx, tenantId, candidate.id);
  return views.find((v) => v.id === row.id) ?? null;
}
