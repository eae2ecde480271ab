import { createRouter } from '../../routing';
import { runInTransaction } from '../../../shared/outbox';
import { db } from '../../../shared/db';
import { createSupplier, deleteSupplier, updateSupplier, type SupplierInput } from '../../../shared/commands/suppliers';
import { getSupplier, listSuppliers } from '../../../shared/queries/suppliers';
import type { SyncCursor } from '../../../shared/queries/sync';
import { createSupplierBody, errorResponses, supplierList, supplierListQuery, supplierView, updateSupplierBody } from './schemas';

/** Suppliers (for incoming invoices). Roles like customers: viewer reads, member creates, manager edits/deletes. */
export const { router: suppliersRouter, add } = createRouter('/api/suppliers', 'Suppliers');

add<unknown, SyncCursor & { page: number; limit: number }>({
  method: 'get',
  path: '/',
  auth: 'viewer',
  summary: 'List suppliers by name (paged by page or cursor)',
  description:
    'pagination.total is exact (a counter); pagination.nextCursor passed back as cursor gives the next page by an index range, null at the end (docs/lists.md). ' +
    'With updatedSince (and afterId, or the cursor of the previous sync page): the incremental sync: suppliers changed since, deleted ones included with deletedAt, ordered by (updatedAt, id); page on with the last entry as updatedSince/afterId (docs/sync.md).',
  query: supplierListQuery,
  responses: { 200: { description: 'Suppliers', schema: supplierList }, ...errorResponses },
  handler: async (ctx) => {
    ctx.body = await listSuppliers(db(), ctx.state.actor.tenantId, ctx.input.query);
  },
});

add<SupplierInput>({
  method: 'post',
  path: '/',
  auth: 'member',
  summary: 'Create a supplier',
  body: createSupplierBody,
  responses: { 201: { description: 'Created supplier', schema: supplierView }, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.status = 201;
    ctx.body = await runInTransaction((trx) => createSupplier({ trx, actor }, ctx.input.body));
  },
});

add({
  method: 'get',
  path: '/:id',
  auth: 'viewer',
  summary: 'One supplier',
  responses: { 200: { description: 'Supplier', schema: supplierView }, ...errorResponses },
  handler: async (ctx) => {
    ctx.body = await getSupplier(db(), ctx.state.actor.tenantId, ctx.input.params.id);
  },
});

add<SupplierInput>({
  method: 'put',
  path: '/:id',
  auth: 'manager',
  summary: 'Update a supplier (fields present replace the stored ones)',
  body: updateSupplierBody,
  responses: { 200: { description: 'Updated supplier', schema: supplierView }, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => updateSupplier({ trx, actor }, ctx.input.params.id, ctx.input.body));
  },
});

add({
  method: 'delete',
  path: '/:id',
  auth: 'manager',
  summary: 'Soft-delete a supplier (400 DEPENDENCY while it has open incoming invoices)',
  responses: { 204: { description: 'Deleted' }, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    await runInTransaction((trx) => deleteSupplier({ trx, actor }, ctx.input.params.id));
    ctx.status = 204;
  },
});
