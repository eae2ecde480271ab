import { createRouter } from '../../routing';
import { errorEnvelope } from '../../schemas/common';
import { runInTransaction } from '../../../shared/outbox';
import { db } from '../../../shared/db';
import { notFound } from '../../../shared/errors';
import type { IncomingEinvoiceStatus } from '../../../shared/models/IncomingEinvoice';
import { receiveIncomingEinvoice } from '../../../shared/commands/incomingEinvoices/receive';
import { getIncomingEinvoice, listIncomingEinvoices, originalOfInvoice } from '../../../shared/queries/incomingEinvoices';
import { readEinvoiceUpload } from './body';
import { accepted, errorResponses, incomingList, incomingView, listQuery, uploadBodyDoc, uploadQuery } from './schemas';

/** Incoming e-invoices: upload a file, follow its import (docs/e-invoicing-inbound.md, "Inbound API"). */
export const { router: incomingEinvoicesRouter, add } = createRouter('/api/incoming-einvoices', 'Incoming e-invoices');

add<unknown, { supplierId?: string }>({
  method: 'post',
  path: '/',
  auth: 'member',
  rawBody: true,
  summary: 'Upload an e-invoice (XRechnung/Peppol UBL, CII, Factur-X/ZUGFeRD PDF, ebInterface) for import',
  description:
    'Body: the file itself, as application/xml, text/xml or application/pdf, or multipart/form-data with the file in the field `file` ' +
    '(exactly one file; its part type, else its bytes, decide XML or PDF). At most 10 MB (413); other types 415; no file, an empty one, ' +
    'or a file in another field 400. The file is stored unchanged and imported by a background job: poll GET /api/incoming-einvoices/{id}. ' +
    'The same file again is stored with status duplicate naming the earlier upload.',
  rawBodyDoc: uploadBodyDoc,
  query: uploadQuery,
  before: [readEinvoiceUpload],
  responses: {
    202: { description: 'Stored and queued (or a duplicate of an earlier upload)', schema: accepted },
    413: { description: 'File over 10 MB (or a form with more than small extra fields)', schema: errorEnvelope },
    415: {
      description: 'Not application/xml, text/xml, application/pdf or multipart/form-data; a form file that is neither XML nor PDF',
      schema: errorEnvelope,
    },
    ...errorResponses,
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    const upload = ctx.state.upload as { bytes: Buffer; mediaType: string };
    ctx.status = 202;
    ctx.body = await runInTransaction((trx) => receiveIncomingEinvoice({ trx, actor }, { ...upload, supplierIdHint: ctx.input.query.supplierId ?? null }));
  },
});

add<unknown, { status?: IncomingEinvoiceStatus; page: number; limit: number }>({
  method: 'get',
  path: '/',
  auth: 'viewer',
  summary: 'List uploaded e-invoices (paged, newest first)',
  query: listQuery,
  responses: { 200: { description: 'Uploads', schema: incomingList }, ...errorResponses },
  handler: async (ctx) => {
    ctx.body = await listIncomingEinvoices(db(), ctx.state.actor.tenantId, ctx.input.query);
  },
});

add({
  method: 'get',
  path: '/:id',
  auth: 'viewer',
  summary: 'One uploaded e-invoice and the state of its import',
  responses: { 200: { description: 'Upload', schema: incomingView }, ...errorResponses },
  handler: async (ctx) => {
    ctx.body = await getIncomingEinvoice(db(), ctx.state.actor.tenantId, ctx.input.params.id);
  },
});

/** The original file of an imported incoming invoice (the other invoice routes are in invoices/ and invoiceDocuments/). */
export const { router: invoiceOriginalRouter, add: addOriginal } = createRouter('/api/invoices', 'Incoming e-invoices');

addOriginal({
  method: 'get',
  path: '/:id/original',
  auth: 'viewer',
  summary: 'The e-invoice file an incoming invoice was imported from, byte for byte',
  responses: {
    200: { description: 'The stored file', content: { 'application/xml': {}, 'text/xml': {}, 'application/pdf': {} } },
    ...errorResponses,
  },
  handler: async (ctx) => {
    const original = await originalOfInvoice(db(), ctx.state.actor.tenantId, ctx.input.params.id);
    if (!original) throw notFound('Original e-invoice');
    ctx.type = original.mediaType;
    ctx.body = original.bytes;
  },
});
