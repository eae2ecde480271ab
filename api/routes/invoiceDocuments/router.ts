import { createRouter, type AppContext } from '../../routing';
import { obtainDocument } from '../../../shared/documents/obtainDocument';
import { CONTENT_TYPES, documentFileName, type DocumentKind } from '../../../shared/documents/kinds';
import { emailForInvoice } from '../../../shared/queries/emailPreview';
import { loadInvoiceView } from '../../../shared/queries/invoices';
import { db } from '../../../shared/db';
import { notFound } from '../../../shared/errors';

/**
 * Documents of an invoice: PDF, ZUGFeRD (PDF/A-3 + factur-x.xml), ebInterface 6.1 XML, and the
 * pre-filled e-mail. Rendering happens in the documents worker; see shared/documents/.
 */
export const { router: invoiceDocumentsRouter, add } = createRouter('/api/invoices', 'Invoice documents');

function serve(kind: DocumentKind) {
  return async (ctx: AppContext) => {
    const { id } = ctx.input.params as { id: string };
    const { content, invoice, version } = await obtainDocument(ctx.state.actor.tenantId, id, kind, ctx.config.renderWaitMs, ctx.config);
    const etag = `"${kind}-${id}-v${version}"`;
    ctx.set('ETag', etag);
    ctx.set('Cache-Control', 'private, no-cache');
    if (ctx.get('If-None-Match') === etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = CONTENT_TYPES[kind];
    ctx.set('Content-Disposition', `${kind === 'pdf' || kind === 'zugferd' ? 'inline' : 'attachment'}; filename="${documentFileName(kind, invoice)}"`);
    ctx.body = content;
  };
}

const documentResponses = (kind: DocumentKind, description: string) => ({
  // The media type without its charset: the same value the handler sets, so the two cannot drift.
  200: { description, content: { [CONTENT_TYPES[kind].split(';')[0]]: {} } },
  304: { description: 'Not modified: If-None-Match carried the current ETag' },
  400: { description: kind === 'pdf' ? 'Invalid id' : 'The invoice is a draft or not exportable (INVALID_INPUT)' },
  404: { description: 'Invoice not found' },
  503: { description: 'Rendering takes longer than RENDER_WAIT_MS; retry after Retry-After seconds' },
});

add({
  method: 'get',
  path: '/:id/pdf',
  auth: 'viewer',
  summary: 'Invoice as PDF (drafts are marked ENTWURF)',
  description:
    'For an incoming invoice imported from an e-invoice (POST /api/incoming-einvoices): a rendering of the stored e-invoice, marked ' +
    '"Darstellung der E-Rechnung (nicht das Original; …)" with the format and SHA-256 of the original, also for a Factur-X PDF; ' +
    'the original file itself is GET /api/invoices/{id}/original.',
  responses: documentResponses('pdf', 'PDF document'),
  handler: serve('pdf'),
});

add({
  method: 'get',
  path: '/:id/zugferd',
  auth: 'viewer',
  summary: 'ZUGFeRD / Factur-X e-invoice: PDF/A-3 with embedded factur-x.xml (EN 16931 profile); finalized invoices only',
  responses: documentResponses('zugferd', 'PDF/A-3 with embedded CII XML'),
  handler: serve('zugferd'),
});

add({
  method: 'get',
  path: '/:id/ebinterface',
  auth: 'viewer',
  summary: 'ebInterface 6.1 XML (Austrian e-invoice standard); finalized invoices and credit notes only',
  responses: documentResponses('ebinterface', 'ebInterface 6.1 XML'),
  handler: serve('ebinterface'),
});

add<unknown, { syntax?: 'ubl' | 'cii' }>({
  method: 'get',
  path: '/:id/xrechnung',
  auth: 'viewer',
  summary: 'XRechnung 3.0 XML (German CIUS of EN 16931); finalized invoices and credit notes only',
  description:
    'syntax=ubl (the default): UBL 2.1 Invoice or CreditNote; syntax=cii: UN/CEFACT CII D16B. The document fulfils the XRechnung rules (BR-DE-*): ' +
    "a buyer reference (BT-10: the invoice's buyerReference, else the customer's; the Leitweg-ID for German public buyers), the seller contact " +
    '(settings contactName, contactPhone, contactEmail), seller and buyer post code and city, payment instructions (the IBAN). An invoice whose data ' +
    'cannot make a valid XRechnung is refused with 400 INVALID_INPUT, details.violations listing the rule ids and what to fill in.',
  query: {
    type: 'object',
    additionalProperties: false,
    properties: { syntax: { type: 'string', enum: ['ubl', 'cii'], description: 'XML syntax; default ubl' } },
  },
  responses: {
    ...documentResponses('xrechnung-cii', 'XRechnung 3.0 XML (UBL 2.1 or CII D16B)'),
    400: { description: 'The invoice is a draft, not exportable, or its data breaks an XRechnung rule (INVALID_INPUT with details.violations)' },
  },
  handler: async (ctx) => {
    const { syntax = 'ubl' } = ctx.input.query;
    await serve(syntax === 'cii' ? 'xrechnung-cii' : 'xrechnung-ubl')(ctx);
  },
});

add({
  method: 'get',
  path: '/:id/ubl',
  auth: 'viewer',
  summary: 'Peppol BIS Billing 3.0 UBL (Invoice or CreditNote); finalized invoices and credit notes only',
  description:
    "The seller's and buyer's electronic addresses (BT-34, BT-49) are their peppolId (settings, customer), else derived from the VAT ID " +
    '(9914 AT, 9930 DE). An invoice whose data cannot make a valid Peppol document is refused with 400 INVALID_INPUT, details.violations ' +
    'listing the rule ids (PEPPOL-EN16931-R…, BR-…) and what to fill in.',
  responses: {
    ...documentResponses('peppol-ubl', 'Peppol BIS Billing 3.0 UBL 2.1 XML'),
    400: { description: 'The invoice is a draft, not exportable, or its data breaks a Peppol rule (INVALID_INPUT with details.violations)' },
  },
  handler: serve('peppol-ubl'),
});

add({
  method: 'get',
  path: '/:id/email-preview',
  auth: 'viewer',
  summary: "The send dialog's pre-filled e-mail: the tenant's template with variables resolved",
  description:
    "The tenant's template for the document type (rechnung, angebot, gutschrift) with the variables resolved. For a draft, {{invoiceNumber}} is kept as written (the number is assigned at send) and {{dueDate}} is the due date a send today would set; POST …/send resolves the variables in the text it is given, so this text sent back unchanged mails the real number.",
  responses: {
    200: {
      description: 'to (customer e-mail), subject and body',
      schema: { type: 'object', properties: { to: { type: ['string', 'null'] }, subject: { type: 'string' }, body: { type: 'string' } } },
    },
    404: { description: 'Invoice not found' },
  },
  handler: async (ctx) => {
    const invoice = await loadInvoiceView(db(), ctx.state.actor.tenantId, ctx.input.params.id);
    if (!invoice) throw notFound('Invoice');
    ctx.body = await emailForInvoice(db(), ctx.state.actor.tenantId, invoice);
  },
});
