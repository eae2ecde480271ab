import { DETAILS_MARKDOWN_MAX_LENGTH } from '../../../shared/providers/ai/offerDetails';
import { CURRENCIES } from '../../../shared/domain/currencies';
import { FOREIGN_VAT, TAX_CATEGORIES } from '../../../shared/domain/tax/vatCategory';
import { INVOICE_STATUSES, INVOICE_TYPES } from '../../../shared/domain/invoiceStates';
import { EINVOICE_FORMATS } from '../../../shared/domain/einvoiceFormats';
import { PAYMENT_METHODS } from '../../../shared/commands/recordPayment';
import { cursorListOf, cursorQuery, errorEnvelope, isoDate, money, pageQuery, positiveMoney, syncQuery, timestamp, uuid } from '../../schemas/common';

/** Invoice JSON Schemas: request validation and the OpenAPI document from one source. */
const nullable = (s: Record<string, unknown>) => ({ ...s, type: [s.type as string, 'null'] });
const nullableDate = { type: ['string', 'null'], format: 'date', description: 'YYYY-MM-DD' };

export const itemInput = {
  type: 'object',
  additionalProperties: false,
  required: ['description', 'quantity', 'unitPrice', 'taxRate'],
  properties: {
    description: { type: 'string', minLength: 1, maxLength: 2000 },
    quantity: {
      description: 'Greater than 0, at most 4 decimal places; a JSON number or a decimal string ("1.5")',
      anyOf: [
        { type: 'number', exclusiveMinimum: 0, maximum: 9999999999 },
        { type: 'string', pattern: '^\\d{1,10}(\\.\\d{1,4})?$' },
      ],
    },
    unit: nullable({ type: 'string', maxLength: 50 }),
    unitPrice: { ...money, description: 'Net unit price, decimal string with at most 2 places; negative for a discount line' },
    taxRate: {
      type: 'string',
      maxLength: 6,
      pattern: '^\\d{1,3}(\\.\\d{1,2})?$',
      description: 'Percent as a string; allowed values depend on the tenant country (AT: 0, 10, 13, 20; DE: 0, 7, 19)',
    },
    taxCategory: {
      type: ['string', 'null'],
      enum: [...TAX_CATEGORIES, null],
      description:
        'VAT situation of the line (docs/vat-categories.md): standard (rate > 0) or, at 0 %, zeroRated, exempt (with exemptionReason), reverseCharge, intraCommunitySupply, export, notSubject. Inferred when absent; a 0 % line nothing can classify must be given one before the invoice is sent',
    },
    exemptionReason: nullable({ type: 'string', maxLength: 40, description: 'For taxCategory exempt: a code of GET /api/tax/exemption-reasons?country=' }),
    exemptionNote: nullable({ type: 'string', maxLength: 500, description: 'Free text printed after the statutory wording' }),
    position: { type: 'integer', description: 'Ignored: items keep the array order and are renumbered 1..N' },
  },
} as const;

const invoiceProperties = {
  type: { type: 'string', enum: INVOICE_TYPES },
  customerId: nullable({ ...uuid }),
  supplierId: nullable({ ...uuid, description: 'Incoming invoices (eingangsrechnung) only' }),
  items: { type: 'array', minItems: 1, maxItems: 500, items: itemInput },
  notes: nullable({ type: 'string', maxLength: 10000 }),
  footerText: nullable({ type: 'string', maxLength: 10000 }),
  customFields: nullable({
    type: 'object',
    maxProperties: 50,
    propertyNames: { maxLength: 100 },
    additionalProperties: { type: 'string', maxLength: 2000 },
    description: 'Object of string values',
  }),
  paymentTermDays: nullable({ type: 'integer', minimum: 0, maximum: 3650 }),
  issueDate: { ...nullableDate, description: 'Defaults to today; replaced by the send date on finalization' },
  serviceDate: { ...nullableDate, description: 'Day of delivery or service; with serviceEndDate the first day of the service period' },
  serviceEndDate: { ...nullableDate, description: 'Last day of the service period (Leistungszeitraum) that starts on serviceDate; not before it' },
  buyerReference: nullable({
    type: 'string',
    maxLength: 200,
    description: "Buyer reference (BT-10) of the e-invoice, e.g. a Leitweg-ID; without it the customer's buyerReference. Frozen once finalized",
  }),
  orderReference: nullable({ type: 'string', maxLength: 200, description: "The buyer's purchase order reference (BT-13). Frozen once finalized" }),
  detailsMarkdown: nullable({ type: 'string', maxLength: DETAILS_MARKDOWN_MAX_LENGTH, description: 'Quotes (angebot) only' }),
  currency: nullable({ type: 'string', enum: [...CURRENCIES, null] }),
  expectedTotalGross: { ...money, description: 'When given and different from the computed totalGross: 422 with expected and computed' },
  invoiceNumber: nullable({ type: 'string', minLength: 1, maxLength: 100, description: 'Supplier’s number (eingangsrechnung)' }),
  invoiceDate: { ...nullableDate, description: 'Supplier’s invoice date (eingangsrechnung)' },
  exchangeRate: {
    type: ['object', 'null'],
    additionalProperties: false,
    required: ['rate', 'date', 'source'],
    description:
      "Documents in another currency than EUR only (400 on exchangeRate otherwise): the rate the user enters instead of the ECB's, e.g. the BMF monthly average (AT § 20 Abs. 6 UStG). Without it, send uses the ECB rate of the issue date and an incoming invoice the ECB rate of its invoiceDate (400 on exchangeRate when the ECB has none). Frozen once the document is finalized",
    properties: {
      rate: { type: 'string', maxLength: 20, description: 'Units of the currency per 1 EUR, a decimal string > 0 with at most 6 places, e.g. "1.0867"' },
      date: { ...isoDate, description: 'The day the rate is for; not in the future' },
      source: { type: 'string', enum: ['manual'], description: 'Always manual: ECB rates are looked up, not sent' },
    },
  },
  relatedInvoiceId: nullable({
    ...uuid,
    description:
      'Credit notes (gutschrift) only: the invoice they correct, a finalized (not entwurf) rechnung of the same customer and currency; anything else is 400 on relatedInvoiceId',
  }),
} as const;

export const createInvoiceBody = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'items'],
  properties: invoiceProperties,
} as const;

export const updateInvoiceBody = {
  type: 'object',
  additionalProperties: false,
  properties: invoiceProperties,
  description: 'Draft: full replace. Finalized: only notes, footerText, customFields may differ from the stored values.',
} as const;

export const listInvoicesQuery = {
  type: 'object',
  // A misspelt filter (?staus=offen) is a 400, not the unfiltered list.
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: INVOICE_TYPES },
    status: { type: 'string', enum: INVOICE_STATUSES },
    customerId: uuid,
    supplierId: uuid,
    from: { ...isoDate, description: 'issueDate on or after (inclusive)' },
    to: { ...isoDate, description: 'issueDate on or before (inclusive)' },
    ...pageQuery,
    ...cursorQuery,
    ...syncQuery,
  },
} as const;

export const sendBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    to: { type: 'string', format: 'email', maxLength: 254, description: 'Defaults to the customer’s e-mail' },
    subject: {
      type: 'string',
      minLength: 1,
      maxLength: 300,
      description: 'Defaults to the tenant’s template for the document type; template variables in it are resolved at send',
    },
    message: {
      type: 'string',
      maxLength: 20000,
      description:
        'Defaults to the tenant’s template for the document type. {{customerName}}, {{invoiceNumber}}, {{totalGross}}, {{dueDate}}, {{companyName}} and {{documentType}} are resolved after a draft got its number and due date; any other text, unknown {{names}} included, is sent as written',
    },
    format: {
      type: 'string',
      enum: EINVOICE_FORMATS,
      description:
        "What the e-mail attaches; overrides the customer's einvoiceFormat. Default: the customer's einvoiceFormat, else zugferd when the setting zugferdByDefault is on, else pdf. " +
        'pdf: the PDF; zugferd: the ZUGFeRD PDF (PDF/A-3 with factur-x.xml) alone; xrechnung-ubl, xrechnung-cii, peppol-ubl, ebinterface: the PDF plus the XML as <number>.xml (application/xml). ' +
        'An e-invoice format given here or by the customer is checked before anything is finalized: when the invoice cannot make a valid document, 400 INVALID_INPUT with error.violations listing the rule ids (BR-DE-15, PEPPOL-EN16931-R010, …) and what to fill in, and the invoice stays as it was. ' +
        'Quotes (angebot) are sent as PDF: another format is 400.',
    },
  },
} as const;

export const paymentBody = {
  type: 'object',
  additionalProperties: false,
  required: ['amount', 'date', 'method'],
  properties: {
    amount: positiveMoney,
    date: { ...isoDate, description: 'Not in the future (Europe/Vienna date)' },
    method: { type: 'string', enum: PAYMENT_METHODS },
  },
} as const;

const party = {
  type: ['object', 'null'],
  properties: {
    id: uuid,
    name: { type: 'string' },
    company: { type: ['string', 'null'] },
    email: { type: ['string', 'null'] },
    phone: { type: ['string', 'null'] },
    address: { type: ['string', 'null'] },
    vatId: { type: ['string', 'null'] },
    country: { type: ['string', 'null'] },
  },
};

export const paymentView = {
  type: 'object',
  properties: { id: uuid, amount: money, date: isoDate, method: { type: 'string' }, createdAt: timestamp },
} as const;

export const invoiceView = {
  type: 'object',
  // Present only where they apply (api/responseSchemas.ts): the supplier fields on incoming invoices, deliveries on single reads.
  'x-optional': ['supplierId', 'invoiceNumber', 'invoiceDate', 'source', 'externalId', 'deliveries'],
  properties: {
    id: uuid,
    type: { type: 'string', enum: INVOICE_TYPES },
    number: { type: ['string', 'null'], description: 'RE-2026-00001 / AN-… / GS-…; null while draft' },
    status: { type: 'string', enum: INVOICE_STATUSES },
    customerId: { type: ['string', 'null'] },
    customer: party,
    items: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          position: { type: 'integer' },
          description: { type: 'string' },
          unit: { type: ['string', 'null'] },
          quantity: { type: 'number', exclusiveMinimum: 0, description: 'JSON number with at most 4 decimal places (exact), e.g. 2.5' },
          unitPrice: money,
          taxRate: { type: 'string' },
          netAmount: money,
          taxAmount: money,
          grossAmount: money,
          taxCategory: {
            type: ['string', 'null'],
            enum: [...TAX_CATEGORIES, FOREIGN_VAT, null],
            description: 'foreignVat: another country’s VAT on an imported incoming invoice, not input tax of the return (docs/vat-categories.md)',
          },
          exemptionReason: { type: ['string', 'null'] },
          exemptionNote: { type: ['string', 'null'] },
        },
      },
    },
    notes: { type: ['string', 'null'] },
    footerText: { type: ['string', 'null'] },
    customFields: { type: 'object', additionalProperties: { type: 'string' } },
    paymentTermDays: { type: ['integer', 'null'] },
    detailsMarkdown: { type: ['string', 'null'] },
    currency: { type: 'string' },
    issueDate: isoDate,
    dueDate: { type: ['string', 'null'] },
    serviceDate: { type: ['string', 'null'] },
    serviceEndDate: { type: ['string', 'null'] },
    buyerReference: { type: ['string', 'null'] },
    orderReference: { type: ['string', 'null'] },
    totalNet: money,
    totalTax: money,
    totalGross: money,
    taxBreakdown: { type: 'array', items: { type: 'object', properties: { taxRate: { type: 'string' }, net: money, tax: money } } },
    amountPaid: money,
    amountDue: money,
    payments: { type: 'array', items: paymentView, description: 'Oldest first; also in list entries' },
    relatedInvoiceId: { type: ['string', 'null'] },
    relatedInvoiceNumber: { type: ['string', 'null'] },
    creditNoteId: { type: ['string', 'null'] },
    sentAt: { type: ['string', 'null'] },
    exchangeRate: {
      type: ['object', 'null'],
      description: 'Documents in another currency than EUR: the rate used (units of the currency per EUR), its date and source (ecb | manual)',
      properties: { rate: { type: 'string' }, date: isoDate, source: { enum: ['ecb', 'manual'] } },
    },
    warnings: {
      type: 'array',
      description: 'What would stop a draft from being sent, e.g. a 0 % line without taxCategory (field items.<i>.taxCategory); empty otherwise',
      items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } },
    },
    deliveries: {
      type: 'array',
      description: 'E-mail deliveries, newest first (single reads)',
      items: {
        type: 'object',
        properties: {
          id: uuid,
          to: { type: 'string' },
          status: { enum: ['queued', 'sending', 'sent', 'failed'] },
          attempts: { type: 'integer' },
          smtpResponse: { type: ['string', 'null'] },
          error: { type: ['string', 'null'] },
          sentAt: { type: ['string', 'null'] },
          createdAt: { type: 'string' },
        },
      },
    },
    createdAt: timestamp,
    updatedAt: timestamp,
    supplierId: { type: ['string', 'null'] },
    invoiceNumber: { type: ['string', 'null'] },
    invoiceDate: { type: ['string', 'null'] },
    source: { type: ['string', 'null'] },
    externalId: { type: ['string', 'null'] },
  },
} as const;

/** A list entry: the view plus deletedAt, always there (set only in an updatedSince list: docs/sync.md). */
export const invoiceList = cursorListOf({
  ...invoiceView,
  properties: { ...invoiceView.properties, deletedAt: { type: ['string', 'null'], format: 'date-time' } },
});

export const errorResponses = {
  400: { description: 'Invalid input, or IMMUTABLE (wrong state for the operation)', schema: errorEnvelope },
  401: { description: 'Authentication required', schema: errorEnvelope },
  403: { description: 'Role does not permit the operation', schema: errorEnvelope },
  404: { description: 'Not found (or another tenant’s)', schema: errorEnvelope },
};
export const idempotencyResponses = {
  409: { description: 'Idempotency-Key reused with a different body', schema: errorEnvelope },
};
/** The 422 envelope with the values a client needs to correct itself (shared/errors.ts unprocessable's extras). */
const unprocessableEnvelope = {
  ...errorEnvelope,
  properties: {
    error: {
      ...errorEnvelope.properties.error,
      properties: {
        ...errorEnvelope.properties.error.properties,
        expected: { type: 'string', format: 'money', description: 'Total mismatch: the expectedTotalGross sent' },
        computed: { type: 'string', format: 'money', description: 'Total mismatch or a negative total: the totalGross computed' },
        amountDue: { type: 'string', format: 'money', description: 'Payment above what is due: the amount still due' },
      },
    },
  },
} as const;

export const unprocessableResponse = {
  422: { description: 'Semantically invalid (total mismatch, a negative total, payment rules)', schema: unprocessableEnvelope },
};
