import { CURRENCIES } from '../../../shared/domain/currencies';
import { cursorQuery, errorEnvelope, syncQuery, timestamp, uuid } from '../../schemas/common';
import { PEPPOL_SCHEMES } from '../../../shared/domain/peppolId';
import { EINVOICE_FORMATS } from '../../../shared/models/Customer';

/** An electronic address (BT-34/BT-49); the id is checked per scheme in code (shared/domain/peppolId.ts). */
export const peppolIdSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['scheme', 'id'],
  properties: {
    scheme: {
      type: 'string',
      enum: Object.keys(PEPPOL_SCHEMES),
      description: 'ISO 6523 ICD / EAS code: 0204 Leitweg-ID, 9930 DE VAT ID, 9914 AT VAT ID, 0088 GLN, …',
    },
    id: { type: 'string', minLength: 1, maxLength: 100 },
  },
  description: 'Electronic address (Peppol participant id), e.g. {"scheme":"0204","id":"04011000-12345-03"}',
} as const;

/** Customer JSON Schemas: validation and the OpenAPI document in one place. */
const nullable = (s: Record<string, unknown>) => ({ ...s, type: [s.type as string, 'null'] });

export const customerProperties = {
  name: { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S', description: 'Full name (required)' },
  company: nullable({ type: 'string', maxLength: 200 }),
  email: nullable({ type: 'string', format: 'email', maxLength: 254 }),
  phone: nullable({ type: 'string', maxLength: 50, pattern: '^[0-9+()./\\- ]*$' }),
  address: nullable({ type: 'string', maxLength: 1000, description: 'Full postal address' }),
  vatId: nullable({ type: 'string', maxLength: 20, description: 'EU VAT ID, checked against its country prefix format (e.g. ATU12345678, DE123456789)' }),
  country: nullable({ type: 'string', pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2; derived from the VAT ID when absent' }),
  currency: nullable({ type: 'string', enum: [...CURRENCIES, null], description: 'ISO 4217 code' }),
  paymentTermDays: nullable({ type: 'integer', minimum: 0, maximum: 3650 }),
  color: nullable({ type: 'string', pattern: '^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$', description: 'Hex colour, #RGB or #RRGGBB' }),
  buyerReference: nullable({
    type: 'string',
    maxLength: 200,
    description: "Default buyer reference (BT-10) of the customer's e-invoices; for German public buyers the Leitweg-ID (XRechnung requires one)",
  }),
  peppolId: peppolIdSchema,
  einvoiceFormat: nullable({ type: 'string', enum: [...EINVOICE_FORMATS, null], description: 'Preferred e-invoice format (stored)' }),
  customerType: nullable({
    type: 'string',
    enum: ['business', 'consumer', null],
    description:
      'Business or consumer, for statutory default interest on dunning notices (docs/dunning.md); null: a business when it has a VAT ID or a company name',
  }),
} as const;

export const createCustomerBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: customerProperties,
} as const;

export const updateCustomerBody = {
  type: 'object',
  additionalProperties: false,
  properties: customerProperties,
  description: 'Partial update: fields present replace the stored ones; null clears an optional field',
} as const;

export const customerView = {
  type: 'object',
  properties: {
    id: uuid,
    ...customerProperties,
    createdAt: timestamp,
    updatedAt: timestamp,
    deletedAt: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

/** GET /api/customers: no query (all), a page (limit, cursor: docs/lists.md), or the incremental sync (docs/sync.md). */
export const listCustomersQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...syncQuery,
    ...cursorQuery,
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: 100,
      description: 'A page of at most this many (default 25 with cursor or updatedSince); without limit, cursor and updatedSince: all',
    },
  },
} as const;

export const errorResponses = {
  400: { description: 'Invalid input', schema: errorEnvelope },
  401: { description: 'Authentication required', schema: errorEnvelope },
  403: { description: 'Role does not permit the operation', schema: errorEnvelope },
  404: { description: 'Not found (or another tenant’s)', schema: errorEnvelope },
};
