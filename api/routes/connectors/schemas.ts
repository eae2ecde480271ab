import { cursorQuery, errorEnvelope, timestamp, uuid } from '../../schemas/common';

const secret = { type: 'string', minLength: 1, maxLength: 1000 } as const;
const nullableString = (maxLength: number, description: string) => ({ type: ['string', 'null'], maxLength, description }) as const;

/** Which fields a provider needs is checked per slug in the command (400 with details). */
export const installBody = {
  type: 'object',
  additionalProperties: false,
  description: 'stripe { webhookSecret }, paypal { webhookId }, mollie { apiKey, signingSecret? }, bank { webhookSecret }',
  properties: { webhookSecret: secret, webhookId: secret, apiKey: secret, signingSecret: secret },
} as const;

export const installResponse = {
  type: 'object',
  properties: {
    webhookUrl: { type: 'string', description: 'PUBLIC_BASE_URL/api/payment-import/<slug>/<token>; enter it at the provider' },
    token: { type: 'string', description: 'The secret URL token (shown again by GET)' },
  },
} as const;

export const settingsProperties = {
  autoPost: { type: 'boolean', description: 'Post each incoming invoice to the general ledger' },
  defaultSupplierId: { ...uuid, type: ['string', 'null'], description: 'When set, every event books on this supplier' },
  expenseAccount: nullableString(20, 'Account number debited; else supplier default, supplier history, chart default'),
  clearingAccount: nullableString(20, 'Account number credited; else the chart’s clearing account of the provider'),
} as const;

export const settingsBody = { type: 'object', additionalProperties: false, properties: settingsProperties } as const;

export const connectorView = {
  type: 'object',
  properties: {
    provider: { type: 'string' },
    active: { type: 'boolean' },
    webhookUrl: { type: 'string' },
    settings: { type: 'object', properties: settingsProperties },
    installedAt: timestamp,
    updatedAt: timestamp,
  },
} as const;

export const logsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 }, ...cursorQuery },
} as const;

export const logEntry = {
  type: 'object',
  properties: {
    id: uuid,
    provider: { type: 'string' },
    event: { type: ['string', 'null'], description: 'Provider event name (null when the delivery was rejected before parsing)' },
    status: { type: 'string', enum: ['pending', 'processed', 'duplicate', 'failed', 'invalid_signature'] },
    externalId: { type: ['string', 'null'], description: 'Provider event id' },
    receivedAt: timestamp,
    processedAt: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

export const testWebhookResponse = {
  type: 'object',
  properties: {
    ok: { type: 'boolean' },
    provider: { type: 'string' },
    event: { type: ['object', 'null'] },
    steps: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          step: { type: 'string', enum: ['signature', 'tenant', 'supplier', 'invoice', 'duplicate', 'autoPost'] },
          result: { type: 'string' },
          detail: { type: 'string' },
        },
      },
    },
  },
} as const;

export const errorResponses = {
  400: { description: 'Invalid input', schema: errorEnvelope },
  401: { description: 'Authentication required', schema: errorEnvelope },
  403: { description: 'Role does not permit the operation', schema: errorEnvelope },
  404: { description: 'Unknown provider slug, or the connector is not installed', schema: errorEnvelope },
};
