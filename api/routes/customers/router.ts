import { createRouter } from '../../routing';
import { runInTransaction } from '../../../shared/outbox';
import { db } from '../../../shared/db';
import { createCustomer, deleteCustomer, updateCustomer, type CustomerInput } from '../../../shared/commands/customers';
import { getCustomer, listCustomers } from '../../../shared/queries/customers';
import { createCustomerBody, customerView, errorResponses, listCustomersQuery, updateCustomerBody } from './schemas';

/**
 * Customers. GET /api/customers keeps the spec's bare array (docs/invoices.md, "Customers").
 * Roles: viewer reads, member creates, manager updates and deletes.
 */
export const { router: customersRouter, add } = createRouter('/api/customers', 'Customers');

add<unknown, { updatedSince?: string; afterId?: string; cursor?: string; limit?: number }>({
  method: 'get',
  path: '/',
  auth: 'viewer',
  summary: 'List customers (not deleted), by name; a bare array',
  description:
    'All of them, or with limit (1–100, default 25 with a cursor) and/or cursor a page: the X-Next-Cursor response header (absent at the end) passed back as cursor gives the next page by an index range; X-Total-Count is the number of live customers (docs/lists.md). ' +
    'With updatedSince (and afterId): the incremental sync, still a bare array: at most limit (default 25) customers changed since, deleted ones included with deletedAt, ordered by (updatedAt, id); page on with the last one as updatedSince/afterId until fewer than limit come back (docs/sync.md).',
  query: listCustomersQuery,
  responses: { 200: { description: 'Customers', schema: { type: 'array', items: customerView } }, ...errorResponses },
  handler: async (ctx) => {
    const page = await listCustomers(db(), ctx.state.actor.tenantId, ctx.input.query);
    // The contract's bare array has no envelope: the paging travels in headers (docs/lists.md).
    if (page.nextCursor) ctx.set('X-Next-Cursor', page.nextCursor);
    if (page.total !== null) ctx.set('X-Total-Count', String(page.total));
    ctx.body = page.data;
  },
});

add<CustomerInput>({
  method: 'post',
  path: '/',
  auth: 'member',
  summary: 'Create a customer',
  body: createCustomerBody,
  responses: { 201: { description: 'Created customer', schema: customerView }, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.status = 201;
    ctx.body = await runInTransaction((trx) => createCustomer({ trx, actor }, ctx.input.body));
  },
});

add({
  method: 'get',
  path: '/:id',
  auth: 'viewer',
  summary: 'One customer',
  responses: { 200: { description: 'Customer', schema: customerView }, ...errorResponses },
  handler: async (ctx) => {
    ctx.body = await getCustomer(db(), ctx.state.actor.tenantId, ctx.input.params.id);
  },
});

add<CustomerInput>({
  method: 'put',
  path: '/:id',
  auth: 'manager',
  summary: 'Update a customer (fields present replace the stored ones)',
  body: updateCustomerBody,
  responses: { 200: { description: 'Updated customer', schema: customerView }, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => updateCustomer({ trx, actor }, ctx.input.params.id, ctx.input.body));
  },
});

add({
  method: 'delete',
  path: '/:id',
  auth: 'manager',
  summary: 'Soft-delete a customer (400 DEPENDENCY while it has open or partially paid invoices)',
  responses: { 204: { description: 'Deleted' }, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    await runInTransaction((trx) => deleteCustomer({ trx, actor }, ctx.input.params.id));
    ctx.status = 204;
  },
});
