import { randomUUID } from 'node:crypto';
import { createRouter } from '../../routing';
import { runInTransaction } from '../../../shared/outbox';
import { db } from '../../../shared/db';
import { now } from '../../../shared/clock';
import { todayVienna } from '../../../shared/domain/dates';
import { enqueue } from '../../../shared/queues';
import { jobs } from '../../../shared/jobs/catalog';
import {
  createRecurringInvoice,
  deleteRecurringInvoice,
  pauseRecurringInvoice,
  resumeRecurringInvoice,
  updateRecurringInvoice,
  type RecurringInvoiceInput,
} from '../../../shared/commands/recurringInvoices';
import { getRecurringInvoice, listRecurringInvoicePeriods, listRecurringInvoices, previewRecurringInvoice } from '../../../shared/queries/recurringInvoices';
import { errorResponses, issuedList, listQuery, previewView, recurringInvoiceBody, recurringInvoiceList, recurringInvoiceView, runView } from './schemas';

/**
 * Recurring invoices (docs/recurring-invoices.md). Roles as for invoices (docs/roles.md): viewer
 * reads, member creates (it makes invoices, and a member may create and send invoices), manager
 * changes, pauses, resumes and deletes, admin queues a run at once.
 */
export const { router: recurringInvoicesRouter, add } = createRouter('/api/recurring-invoices', 'Recurring invoices');

type Page = { page: number; limit: number };

add<RecurringInvoiceInput>({
  method: 'post',
  path: '/',
  auth: 'member',
  summary: 'Create a recurring invoice template',
  description:
    'From startDate on, a worker makes one invoice per period (interval monthly, quarterly, halfYearly or yearly), on dayOfMonth, with the period as its service period; sent at once when autoSend. A customer that does not exist or is deleted is 400 on customerId; items are checked as invoice items are.',
  body: recurringInvoiceBody,
  responses: { 201: { description: 'Created template', schema: recurringInvoiceView }, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.status = 201;
    ctx.body = await runInTransaction((trx) => createRecurringInvoice({ trx, actor }, ctx.input.body));
  },
});

add<unknown, Page>({
  method: 'get',
  path: '/',
  auth: 'viewer',
  summary: 'List recurring invoice templates, newest first',
  query: listQuery,
  responses: { 200: { description: 'Templates', schema: recurringInvoiceList }, ...errorResponses },
  handler: async (ctx) => {
    ctx.body = await listRecurringInvoices(db(), ctx.state.actor.tenantId, ctx.input.query);
  },
});

add({
  method: 'post',
  path: '/run',
  auth: 'admin',
  summary: "Queue the run that bills this tenant's due periods now (it runs daily at 06:00 Vienna time anyway)",
  responses: { 202: { description: 'Queued', schema: runView }, ...errorResponses, 503: { description: 'Queue unavailable' } },
  handler: async (ctx) => {
    const tenantId = ctx.state.actor.tenantId;
    // Today as the service's clock sees it, carried in the job: the run bills what is due on the day it was asked for.
    const asOf = todayVienna(now());
    const job = await enqueue(jobs.runRecurringInvoices, { tenantId, asOf, runId: randomUUID() });
    ctx.status = 202;
    ctx.body = { jobId: job.id, status: 'queued', asOf };
  },
});

add({
  method: 'get',
  path: '/:id',
  auth: 'viewer',
  summary: 'One recurring invoice template',
  responses: { 200: { description: 'Template', schema: recurringInvoiceView }, ...errorResponses },
  handler: async (ctx) => {
    ctx.body = await getRecurringInvoice(db(), ctx.state.actor.tenantId, ctx.input.params.id);
  },
});

add<RecurringInvoiceInput>({
  method: 'put',
  path: '/:id',
  auth: 'manager',
  summary: 'Replace a template; periods billed already stay billed',
  body: recurringInvoiceBody,
  responses: { 200: { description: 'Updated template', schema: recurringInvoiceView }, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => updateRecurringInvoice({ trx, actor }, ctx.input.params.id, ctx.input.body));
  },
});

add({
  method: 'delete',
  path: '/:id',
  auth: 'manager',
  summary: 'Delete a template (no further invoices; those made stay)',
  responses: { 204: { description: 'Deleted' }, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    await runInTransaction((trx) => deleteRecurringInvoice({ trx, actor }, ctx.input.params.id));
    ctx.status = 204;
  },
});

add({
  method: 'post',
  path: '/:id/pause',
  auth: 'manager',
  summary: 'Pause: no invoices until resumed (an ended template is 422)',
  responses: { 200: { description: 'Paused template', schema: recurringInvoiceView }, ...errorResponses, 422: { description: 'Ended' } },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => pauseRecurringInvoice({ trx, actor }, ctx.input.params.id));
  },
});

add({
  method: 'post',
  path: '/:id/resume',
  auth: 'manager',
  summary: 'Resume: billing goes on with the first period starting today or later (periods of the pause are not billed)',
  responses: { 200: { description: 'Active template', schema: recurringInvoiceView }, ...errorResponses, 422: { description: 'Ended' } },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => resumeRecurringInvoice({ trx, actor }, ctx.input.params.id));
  },
});

add({
  method: 'get',
  path: '/:id/preview',
  auth: 'viewer',
  summary: 'The next 12 billing dates with their periods (none while paused or ended)',
  responses: { 200: { description: 'Next periods', schema: previewView }, ...errorResponses },
  handler: async (ctx) => {
    ctx.body = await previewRecurringInvoice(db(), ctx.state.actor.tenantId, ctx.input.params.id);
  },
});

add<unknown, Page>({
  method: 'get',
  path: '/:id/invoices',
  auth: 'viewer',
  summary: 'What the template billed: one entry per period with its invoice, newest first',
  query: listQuery,
  responses: { 200: { description: 'Billed periods', schema: issuedList }, ...errorResponses },
  handler: async (ctx) => {
    ctx.body = await listRecurringInvoicePeriods(db(), ctx.state.actor.tenantId, ctx.input.params.id, ctx.input.query);
  },
});
