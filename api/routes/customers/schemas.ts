import { CURRENCIES } from '../../../shared/domain/currencies';
import { errorEnvelope, timestamp, uuid } from '../../schemas/common';

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

export const errorResponses = {
  400: { description: 'Invalid input', schema: errorEnvelope },
  401: { description: 'Authentication required', schema: errorEnvelope },
  403: { description: 'Role does not permit the operation', schema: errorEnvelope },
  404: { description: 'Not found (or another tenant’s)', schema: errorEnvelope },
};
