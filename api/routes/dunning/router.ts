import { randomUUID } from 'node:crypto';
import { createRouter } from '../../routing';
import { db } from '../../../shared/db';
import { runInTransaction } from '../../../shared/outbox';
import { enqueue } from '../../../shared/queues';
import { jobs } from '../../../shared/jobs/catalog';
import { now } from '../../../shared/clock';
import { todayVienna } from '../../../shared/domain/dates';
import { unprocessable } from '../../../shared/errors';
import { issueDunningNotice } from '../../../shared/commands/dunning';
import { dunningProposals, listInvoiceNotices, loadBaseRates, loadDunningTenant } from '../../../shared/queries/dunning';
import { dunningNoticeDocument } from '../../../shared/documents/dunningNotice';
import * as s from './schemas';

/** Dunning (docs/dunning.md): proposals for review, issuing a level, the notices, base rates, the run now. */
export const { router: dunningRouter, add } = createRouter('/api/dunning', 'Dunning');

add<unknown, { country: 'AT' | 'DE' }>({
  method: 'get',
  path: '/base-rates',
  auth: 'viewer',
  summary: 'Published base rates with the day each became valid, oldest first',
  description:
    'The rate on a day is the latest one whose validFrom is on or before it. Operators add new ones without a release: npm run base-rate -- add DE 2027-01-01 1.27 (docs/dunning.md, "Base rates").',
  query: s.baseRatesQuery,
  responses: { 200: { description: 'Base rates', schema: s.baseRates }, 400: s.err('Unknown country') },
  handler: async (ctx) => {
    ctx.body = await loadBaseRates(db(), ctx.input.query.country);
  },
});

add<unknown, { asOf?: string }>({
  method: 'get',
  path: '/proposals',
  auth: 'manager',
  summary: 'The dunning notices due by asOf (default today), for review',
  description:
    'Open EUR sales invoices whose next level is due on asOf: its daysAfterDue after the due date and, after an earlier notice, at least the gap between the two levels. Empty while dunning is not enabled.',
  query: s.proposalsQuery,
  responses: { 200: { description: 'Proposals', schema: s.proposals }, 400: s.err('asOf is not a date'), 403: s.err('Role below manager') },
  handler: async (ctx) => {
    ctx.body = await dunningProposals(db(), ctx.state.actor.tenantId, ctx.input.query.asOf ?? todayVienna(now()));
  },
});

add<Record<string, never>, Record<string, string>, { invoiceId: string }>({
  method: 'post',
  path: '/proposals/:invoiceId/issue',
  auth: 'manager',
  summary: "Issue the invoice's next dunning level today, and e-mail it when the customer has an address",
  body: { type: 'object', additionalProperties: false, properties: {} },
  responses: {
    201: { description: 'The notice', schema: s.notice },
    404: s.err('Invoice not found'),
    422: s.err('Dunning not enabled, the invoice is paid or not open, every level issued, or not yet due for the next level (error.dueOn)'),
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    const asOf = todayVienna(now());
    ctx.body = await runInTransaction((trx) => issueDunningNotice({ trx, actor }, { invoiceId: ctx.input.params.invoiceId, asOf }));
    ctx.status = 201;
  },
});

add({
  method: 'post',
  path: '/run',
  auth: 'admin',
  summary: "Queue today's dunning run of this tenant at once",
  description:
    'The run issues and e-mails every notice due today, as the daily run does; automatic dunning must be on (else review GET /api/dunning/proposals).',
  body: { type: 'object', additionalProperties: false, properties: {} },
  responses: { 202: { description: 'Queued', schema: s.runAnswer }, 403: s.err('Role below admin'), 422: s.err('Automatic dunning is not enabled') },
  handler: async (ctx) => {
    const { tenantId } = ctx.state.actor;
    const t = await loadDunningTenant(db(), tenantId);
    if (!t.dunning.enabled || !t.dunning.automatic) {
      throw unprocessable('Automatic dunning is not enabled (settings dunning.enabled and dunning.automatic); issue reviewed proposals one by one instead');
    }
    const day = todayVienna(now());
    const job = await enqueue(jobs.runDunning, { tenantId, day, runId: randomUUID() });
    ctx.status = 202;
    ctx.body = { jobId: job.id, day, status: 'queued' };
  },
});

/** GET /api/invoices/:id/dunning-notices */
export const { router: invoiceDunningRouter, add: addInvoice } = createRouter('/api/invoices', 'Dunning');

addInvoice({
  method: 'get',
  path: '/:id/dunning-notices',
  auth: 'viewer',
  summary: "The invoice's dunning notices, level by level, with their e-mail's status",
  responses: { 200: { description: 'Notices', schema: s.notices }, 404: s.err('Invoice not found') },
  handler: async (ctx) => {
    ctx.body = await listInvoiceNotices(db(), ctx.state.actor.tenantId, ctx.input.params.id);
  },
});

/** GET /api/dunning-notices/:id/pdf */
export const { router: dunningNoticesRouter, add: addNotice } = createRouter('/api/dunning-notices', 'Dunning');

addNotice({
  method: 'get',
  path: '/:id/pdf',
  auth: 'viewer',
  summary: 'A dunning notice as PDF: the open invoice, fee, interest per base-rate period and total',
  responses: { 200: { description: 'PDF document', content: { 'application/pdf': {} } }, 404: s.err('Dunning notice not found') },
  handler: async (ctx) => {
    const doc = await dunningNoticeDocument(db(), ctx.state.actor.tenantId, ctx.input.params.id);
    ctx.type = doc.contentType;
    ctx.set('Content-Disposition', `inline; filename="${doc.filename}"`);
    ctx.body = doc.content;
  },
});
