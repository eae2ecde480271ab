import { INTERVALS } from '../../../shared/domain/recurrence';
import { errorEnvelope, isoDate, listOf, money, pageQuery, timestamp, uuid } from '../../schemas/common';
import { itemInput } from '../invoices/schemas';

/** Recurring invoices (docs/recurring-invoices.md): validation and the OpenAPI document in one place. */
const nullableDate = { type: ['string', 'null'], format: 'date', description: 'YYYY-MM-DD' } as const;

const templateProperties = {
  customerId: { ...uuid, description: 'An existing customer that is not deleted (else 400 on customerId)' },
  // The invoice's own item schema: a template holds exactly what POST /api/invoices accepts.
  items: { type: 'array', minItems: 1, maxItems: 500, items: itemInput },
  interval: { type: 'string', enum: INTERVALS },
  dayOfMonth: {
    type: ['integer', 'null'],
    minimum: 1,
    maximum: 31,
    description: 'Day each period starts and is billed; in a shorter month the last day (31 → 28/29 February). Default: the day of startDate',
  },
  startDate: {
    ...isoDate,
    description: 'The first period starts on it (or on the next dayOfMonth); in the past: every period due up to today is billed on the first run',
  },
  endDate: { ...nullableDate, description: 'No period starts after it; the last period ends on it' },
  autoSend: { type: 'boolean', description: 'Send each invoice at once (POST /api/invoices/:id/send); else it stays a draft' },
  paymentTermDays: { type: ['integer', 'null'], minimum: 0, maximum: 3650 },
  notes: { type: ['string', 'null'], maxLength: 10000 },
} as const;

export const recurringInvoiceBody = {
  type: 'object',
  additionalProperties: false,
  required: ['customerId', 'items', 'interval', 'startDate', 'autoSend'],
  properties: templateProperties,
} as const;

export const recurringInvoiceView = {
  type: 'object',
  properties: {
    id: uuid,
    ...templateProperties,
    items: { type: 'array', items: { type: 'object' } },
    status: { type: 'string', enum: ['active', 'paused', 'ended'], description: 'ended: endDate left no further period' },
    nextDate: { ...nullableDate, description: 'Start of the next period to bill; null once ended' },
    lastRunAt: { type: ['string', 'null'], format: 'date-time' },
    lastError: { type: ['string', 'null'], description: 'Why the last attempt to bill a period failed (retried by every run); null after a success' },
    lastErrorAt: { type: ['string', 'null'], format: 'date-time' },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
} as const;

export const recurringInvoiceList = listOf(recurringInvoiceView);

export const previewView = {
  type: 'array',
  items: {
    type: 'object',
    properties: { date: isoDate, periodStart: isoDate, periodEnd: isoDate },
  },
} as const;

export const issuedList = listOf({
  type: 'object',
  properties: {
    periodStart: isoDate,
    periodEnd: isoDate,
    invoiceId: { type: ['string', 'null'], format: 'uuid' },
    number: { type: ['string', 'null'], description: 'null while the invoice is a draft' },
    status: { type: ['string', 'null'] },
    totalGross: { type: ['string', 'null'], format: money.format },
    issueDate: nullableDate,
    deleted: { type: 'boolean', description: 'The draft was deleted; the period stays billed' },
    createdAt: timestamp,
  },
});

export const listQuery = { type: 'object', additionalProperties: false, properties: { ...pageQuery } } as const;

export const runView = {
  type: 'object',
  properties: { jobId: { type: 'string' }, status: { type: 'string', enum: ['queued'] }, asOf: isoDate },
} as const;

export const errorResponses = {
  400: { description: 'Invalid input', schema: errorEnvelope },
  401: { description: 'Not authenticated', schema: errorEnvelope },
  403: { description: 'Role too low', schema: errorEnvelope },
  404: { description: 'Not found', schema: errorEnvelope },
} as const;
