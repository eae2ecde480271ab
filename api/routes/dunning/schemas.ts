import { errorEnvelope, isoDate, money, timestamp, uuid } from '../../schemas/common';

/** Dunning JSON Schemas (docs/dunning.md): validation and the OpenAPI document in one place. */

export const baseRatesQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['country'],
  properties: { country: { type: 'string', enum: ['AT', 'DE'], description: 'DE: Bundesbank Basiszinssatz (§ 247 BGB); AT: OeNB Basiszinssatz' } },
} as const;

export const baseRates = {
  type: 'array',
  items: {
    type: 'object',
    properties: { validFrom: isoDate, rate: { type: 'string', description: 'Percent a year, e.g. "1.27" or "-0.88"' } },
  },
} as const;

export const proposalsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    asOf: { ...isoDate, description: 'Reference day (default today): a later day previews what will be due then, with interest through that day' },
  },
} as const;

export const proposals = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      invoiceId: uuid,
      invoiceNumber: { type: 'string' },
      dueDate: isoDate,
      amountDue: money,
      level: { type: 'integer', minimum: 1, maximum: 3 },
      fee: { ...money, description: "The level's fee, plus the EUR 40 lump sum the first time interest is charged to a business" },
      interest: { ...money, description: 'Default interest not charged by an earlier notice, through asOf' },
      totalDue: { ...money, description: 'Amount due plus the fees and interest of this and the earlier notices' },
    },
  },
} as const;

export const notice = {
  type: 'object',
  properties: {
    id: uuid,
    number: { type: 'string', description: 'Own series per tenant and year, e.g. MA-2026-00001' },
    level: { type: 'integer', minimum: 1, maximum: 3 },
    issuedAt: timestamp,
    fee: money,
    interest: money,
    totalDue: money,
    deliveryStatus: {
      type: 'string',
      enum: ['queued', 'sending', 'sent', 'failed', 'none'],
      description: "The notice's e-mail; none: the customer has no e-mail address",
    },
  },
} as const;

export const notices = { type: 'array', items: notice } as const;

export const runAnswer = {
  type: 'object',
  properties: { jobId: { type: 'string' }, day: isoDate, status: { type: 'string', enum: ['queued'] } },
} as const;

export const err = (description: string) => ({ description, schema: errorEnvelope });
