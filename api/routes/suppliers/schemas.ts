import { cursorListOf, cursorQuery, errorEnvelope, pageQuery, syncQuery, timestamp, uuid } from '../../schemas/common';

const nullable = (s: Record<string, unknown>) => ({ ...s, type: [s.type as string, 'null'] });

export const supplierProperties = {
  name: { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' },
  email: nullable({ type: 'string', format: 'email', maxLength: 254 }),
  vatId: nullable({ type: 'string', maxLength: 20, description: 'EU VAT ID (format per country prefix)' }),
  address: nullable({ type: 'string', maxLength: 1000 }),
  iban: nullable({ type: 'string', maxLength: 42, description: 'IBAN, checked with mod-97' }),
  country: nullable({ type: 'string', pattern: '^[A-Za-z]{2}$' }),
  merchantIds: nullable({
    type: 'object',
    description: 'Merchant ids by payment provider; the webhook pipeline matches suppliers on them',
    additionalProperties: false,
    // Only the providers that were set (api/responseSchemas.ts).
    'x-optional': ['stripe', 'paypal', 'mollie', 'bank'],
    properties: {
      stripe: { type: 'string', minLength: 1, maxLength: 200 },
      paypal: { type: 'string', minLength: 1, maxLength: 200 },
      mollie: { type: 'string', minLength: 1, maxLength: 200 },
      bank: { type: 'string', minLength: 1, maxLength: 200 },
    },
  }),
} as const;

export const createSupplierBody = { type: 'object', additionalProperties: false, required: ['name'], properties: supplierProperties } as const;
export const updateSupplierBody = { type: 'object', additionalProperties: false, properties: supplierProperties } as const;
export const supplierListQuery = { type: 'object', additionalProperties: false, properties: { ...pageQuery, ...cursorQuery, ...syncQuery } } as const;

export const supplierView = {
  type: 'object',
  properties: { id: uuid, ...supplierProperties, createdAt: timestamp, updatedAt: timestamp, deletedAt: { type: ['string', 'null'], format: 'date-time' } },
} as const;
export const supplierList = cursorListOf(supplierView);

export const errorResponses = {
  400: { description: 'Invalid input', schema: errorEnvelope },
  401: { description: 'Authentication required', schema: errorEnvelope },
  403: { description: 'Role does not permit the operation', schema: errorEnvelope },
  404: { description: 'Not found (or another tenant’s)', schema: errorEnvelope },
};
