import { createRouter } from '../../routing';
import { runInTransaction } from '../../../shared/outbox';
import { db } from '../../../shared/db';
import { invalidInput } from '../../../shared/errors';
import { createInvoice } from '../../../shared/commands/createInvoice';
import { updateInvoice } from '../../../shared/commands/updateInvoice';
import { deleteInvoice } from '../../../shared/commands/deleteInvoice';
import { sendInvoice, type SendInput } from '../../../shared/commands/sendInvoice';
import { recordPayment, type PaymentInput } from '../../../shared/commands/recordPayment';
import { cancelInvoice } from '../../../shared/commands/cancelInvoice';
import { convertQuote } from '../../../shared/commands/convertQuote';
import type { InvoiceInput } from '../../../shared/domain/invoiceInput';
import { EINVOICE_FORMATS } from '../../../shared/domain/einvoiceFormats';
import { listInvoices, loadInvoiceView, paymentView as toPaymentView, type InvoiceListFilters } from '../../../shared/queries/invoices';
import { respondIdempotently } from './idempotency';
import { invoiceViewJson } from './viewCache';
import {
  createInvoiceBody,
  errorResponses,
  idempotencyResponses,
  invoiceList,
  invoiceView,
  listInvoicesQuery,
  paymentBody,
  paymentView,
  sendBody,
  unprocessableResponse,
  updateInvoiceBody,
} from './schemas';

/**
 * Invoices (docs/invoices.md). Handlers validate nothing by hand and hold no business
 * rule: each calls one command inside a transaction and answers with the invoice as
 * loadInvoiceView() reads it in that same transaction.
 * Roles: viewer reads; member creates, sends, records payments, converts quotes; manager also
 * updates, deletes and cancels.
 */
export const { router: invoicesRouter, add } = createRouter('/api/invoices', 'Invoices');

const idempotencyHeader =
  'Send an Idempotency-Key header to make retries safe: the same key and body within 24 h return the first response; another body is 409.';

add<unknown, InvoiceListFilters>({
  method: 'get',
  path: '/',
  auth: 'viewer',
  summary: 'List invoices with filters (type, status, customerId, supplierId, from/to on issueDate inclusive) and paging by page or cursor',
  description:
    'pagination.total is exact (kept by counters, not counted per request); pagination.nextCursor passed back as cursor with the same filters gives the next page by an index range whatever the depth, null at the end (docs/lists.md). ' +
    'With updatedSince (and afterId, or the cursor of the previous sync page): the incremental sync: invoices changed since, deleted ones included with deletedAt, ordered by (updatedAt, id) (docs/sync.md).',
  query: listInvoicesQuery,
  responses: {
    200: { description: '{ data, pagination }; entries are invoice views with items and payments (not deliveries)', schema: invoiceList },
    ...errorResponses,
  },
  handler: async (ctx) => {
    const q = ctx.input.query;
    if (q.from && q.to && q.from > q.to) throw invalidInput('Query failed validation', [{ field: 'from', message: 'must not be after to' }]);
    ctx.body = await listInvoices(db(), ctx.state.actor.tenantId, q);
  },
});

add<InvoiceInput>({
  method: 'post',
  path: '/',
  auth: 'member',
  summary: 'Create an invoice (draft; incoming invoices start offen)',
  description: idempotencyHeader,
  body: createInvoiceBody,
  responses: {
    201: { description: 'Created invoice', schema: invoiceView },
    ...errorResponses,
    ...idempotencyResponses,
    ...unprocessableResponse,
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    if (!ctx.get('Idempotency-Key')) {
      // No key to record: createInvoice needs no transaction of ours (it opens one if it must).
      ctx.status = 201;
      ctx.body = (await createInvoice({ trx: db(), actor }, ctx.input.body)).view;
      return;
    }
    await respondIdempotently(ctx, async (trx) => {
      const { view } = await createInvoice({ trx, actor }, ctx.input.body);
      return { status: 201, body: view };
    });
  },
});

add({
  method: 'get',
  path: '/:id',
  auth: 'viewer',
  summary: 'One invoice with items, customer and payments',
  responses: { 200: { description: 'Invoice', schema: invoiceView }, ...errorResponses },
  handler: async (ctx) => {
    const { json, tag } = await invoiceViewJson(db(), ctx.state.actor.tenantId, ctx.input.params.id);
    ctx.type = 'application/json'; // before the body: a string body would otherwise be text/plain
    ctx.body = json;
    ctx.set('ETag', tag);
  },
});

add<InvoiceInput>({
  method: 'put',
  path: '/:id',
  auth: 'manager',
  summary: 'Update an invoice: full replace on a draft; on a finalized invoice only notes, footerText, customFields',
  description:
    'An incoming invoice in another currency booked without an exchange rate (an imported e-invoice or a webhook’s of a day without an ECB rate) ' +
    'also takes exchangeRate { rate, date, source: "manual" } once; from then on its rate is frozen (400 IMMUTABLE), as every finalized rate.',
  body: updateInvoiceBody,
  responses: { 200: { description: 'Updated invoice', schema: invoiceView }, ...errorResponses, ...unprocessableResponse },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction(async (trx) => {
      await updateInvoice({ trx, actor }, ctx.input.params.id, ctx.input.body);
      return loadInvoiceView(trx, actor.tenantId, ctx.input.params.id);
    });
  },
});

add({
  method: 'delete',
  path: '/:id',
  auth: 'manager',
  summary: 'Soft-delete an invoice (entwurf or storniert only, else 400 IMMUTABLE)',
  responses: { 204: { description: 'Deleted' }, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    await runInTransaction((trx) => deleteInvoice({ trx, actor }, ctx.input.params.id));
    ctx.status = 204;
  },
});

add<SendInput>({
  method: 'post',
  path: '/:id/send',
  auth: 'member',
  summary: 'Finalize (entwurf → offen, assigns the number) and e-mail; re-sends a finalized invoice',
  description: `Finalizing a sales invoice or credit note checks the VAT identities the law requires on it, before a number is assigned (400 INVALID_INPUT): the seller's VAT id (Germany: or tax number) when VAT is charged on more than EUR 400 gross (detail settings.vatId; § 11 Abs. 1 Z 3 lit. i UStG, § 14 Abs. 4 Nr. 2 UStG DE); the customer's VAT id above EUR 10,000 gross from an Austrian seller to an Austrian business, i.e. a customer with a company name (detail customer.vatId; § 11 Abs. 1 Z 3 lit. j UStG); both VAT ids on a reverse-charge invoice. A non-EUR total counts as above the limits. Quotes are not checked. A credit note's relatedInvoiceId is checked again (detail relatedInvoiceId). Template variables in subject and message are resolved once the number and due date exist, so the email-preview of a draft (which keeps {{invoiceNumber}}) can be sent back unchanged. The attachment: format (see the body) > the customer's einvoiceFormat > zugferd with the setting zugferdByDefault > pdf; an e-invoice format the request or the customer asks for is written and checked first, and an invoice whose data cannot make it valid is refused with 400 INVALID_INPUT listing the violated rules (error.violations), nothing finalized or queued. ${idempotencyHeader}`,
  body: sendBody,
  responses: {
    202: {
      description: 'E-mail queued',
      schema: {
        type: 'object',
        properties: {
          invoice: invoiceView,
          delivery: {
            type: 'object',
            properties: {
              id: { type: 'string' },
              status: { type: 'string' },
              format: { type: 'string', enum: EINVOICE_FORMATS, description: 'What the e-mail attaches (the request, the customer or the tenant default)' },
            },
          },
        },
      },
    },
    ...errorResponses,
    ...idempotencyResponses,
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    await respondIdempotently(ctx, async (trx) => {
      const r = await sendInvoice({ trx, actor }, ctx.input.params.id, ctx.input.body);
      return {
        status: 202,
        body: { invoice: await loadInvoiceView(trx, actor.tenantId, r.invoiceId), delivery: { id: r.deliveryId, status: 'queued', format: r.format } },
      };
    });
  },
});

add<PaymentInput>({
  method: 'post',
  path: '/:id/payments',
  auth: 'member',
  summary: 'Record a payment (offen|teilbezahlt → teilbezahlt|bezahlt); above amountDue → 422',
  description: idempotencyHeader,
  body: paymentBody,
  responses: {
    201: { description: 'Payment recorded', schema: { type: 'object', properties: { payment: paymentView, invoice: invoiceView } } },
    ...errorResponses,
    ...idempotencyResponses,
    ...unprocessableResponse,
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    await respondIdempotently(ctx, async (trx) => {
      const { paymentId } = await recordPayment({ trx, actor }, ctx.input.params.id, ctx.input.body);
      const invoice = await loadInvoiceView(trx, actor.tenantId, ctx.input.params.id);
      const payment = await trx('payments').where({ tenantId: actor.tenantId, id: paymentId }).first();
      return { status: 201, body: { payment: toPaymentView(payment), invoice } };
    });
  },
});

add({
  method: 'post',
  path: '/:id/cancel',
  auth: 'manager',
  summary:
    'Cancel (offen|teilbezahlt → storniert; an incoming invoice also from bezahlt); a sales invoice gets a reversing credit note, a posted incoming invoice a reversing journal entry',
  responses: {
    200: {
      description: 'Cancelled invoice and its credit note',
      schema: { type: 'object', properties: { invoice: invoiceView, creditNote: { ...invoiceView, type: ['object', 'null'] } } },
    },
    ...errorResponses,
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction(async (trx) => {
      const r = await cancelInvoice({ trx, actor }, ctx.input.params.id);
      return {
        invoice: await loadInvoiceView(trx, actor.tenantId, r.invoiceId),
        creditNote: r.creditNoteId ? await loadInvoiceView(trx, actor.tenantId, r.creditNoteId) : null,
      };
    });
  },
});

add({
  method: 'post',
  path: '/:id/convert',
  auth: 'member',
  summary: 'Turn a quote (angebot, entwurf or offen) into a new draft rechnung',
  // It creates an invoice, as POST /api/invoices does: a client retrying after a timeout must not get two drafts.
  description: idempotencyHeader,
  responses: { 201: { description: 'The new draft invoice', schema: invoiceView }, ...errorResponses, ...idempotencyResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    await respondIdempotently(ctx, async (trx) => {
      const { id } = await convertQuote({ trx, actor }, ctx.input.params.id);
      return { status: 201, body: await loadInvoiceView(trx, actor.tenantId, id) };
    });
  },
});
