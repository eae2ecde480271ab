import { errorEnvelope, timestamp, uuid } from '../../schemas/common';
import { WEBHOOK_EVENT_TYPES } from '../../../shared/domain/outboundWebhooks';

/** Outbound webhook subscriptions (docs/outbound-webhooks.md): validation and the OpenAPI document in one place. */
const url = {
  type: 'string',
  minLength: 1,
  maxLength: 2000,
  description: 'https URL of the receiver; no credentials, no private, loopback or link-local address (checked again after DNS at each delivery)',
} as const;
const events = {
  type: 'array',
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  items: { type: 'string', enum: WEBHOOK_EVENT_TYPES },
  description: `Event types to receive: ${WEBHOOK_EVENT_TYPES.join(', ')}`,
} as const;
const description = { type: ['string', 'null'], maxLength: 500 } as const;
const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;

export const createSubscriptionBody = {
  type: 'object',
  additionalProperties: false,
  required: ['url', 'events'],
  properties: { url, events, description },
} as const;

export const updateSubscriptionBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    url,
    events,
    description,
    active: { type: 'boolean', description: 'false disables the subscription; true enables it again and clears its failure state' },
  },
  description: 'Partial update: fields present replace the stored ones',
} as const;

export const subscriptionView = {
  type: 'object',
  properties: {
    id: uuid,
    url: { type: 'string' },
    events: { type: 'array', items: { type: 'string' } },
    description: { type: ['string', 'null'] },
    active: { type: 'boolean' },
    failingSince: { ...nullableTime, description: 'Since when every delivery has failed; null while deliveries succeed' },
    disabledAt: nullableTime,
    disabledReason: { type: ['string', 'null'] },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
} as const;

export const createdSubscriptionView = {
  type: 'object',
  properties: {
    ...subscriptionView.properties,
    secret: { type: 'string', description: 'The signing secret (whsec_…): shown in this answer only; store it on the receiver' },
  },
} as const;

export const deliveryView = {
  type: 'object',
  properties: {
    id: uuid,
    subscriptionId: uuid,
    eventId: { ...uuid, description: 'The id in the body; the same for retries and redeliveries of one event' },
    eventType: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
    attempts: {
      type: 'array',
      description: 'Each attempt, oldest first: when, how long, the HTTP status (null when no answer came) and what went wrong',
      items: {
        type: 'object',
        properties: {
          attempt: { type: 'integer' },
          at: timestamp,
          ms: { type: 'integer' },
          statusCode: { type: ['integer', 'null'] },
          error: { type: ['string', 'null'] },
          responseBody: { type: ['string', 'null'], description: 'The start of the answer (at most 1,000 characters)' },
        },
      },
    },
    attemptCount: { type: 'integer' },
    lastStatusCode: { type: ['integer', 'null'] },
    lastError: { type: ['string', 'null'] },
    redeliveryOf: { type: ['string', 'null'], format: 'uuid' },
    deliveredAt: nullableTime,
    failedAt: nullableTime,
    createdAt: timestamp,
  },
} as const;

export const deliveriesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
  },
} as const;

export const errorResponses = {
  400: { description: 'Invalid input (unknown event, non-https or private URL, URL with credentials)', schema: errorEnvelope },
  401: { description: 'Authentication required', schema: errorEnvelope },
  403: { description: 'Role does not permit the operation', schema: errorEnvelope },
  404: { description: 'Not found (or another tenant’s)', schema: errorEnvelope },
};
