import { money, timestamp, uuid } from '../../schemas/common';

/** Report JSON Schemas: validation and the OpenAPI document in one place. */
const year = { type: 'integer', minimum: 2000, maximum: 2999, description: 'Calendar year' } as const;
const month = { type: 'integer', minimum: 1, maximum: 12, description: 'Month 1-12 (give month or quarter)' } as const;
const quarter = { type: 'integer', minimum: 1, maximum: 4, description: 'Quarter 1-4 (give month or quarter)' } as const;

export const periodQuery = (formats: string[]) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['year'],
    properties: {
      year,
      month,
      quarter,
      format: { type: 'string', enum: formats, description: `Output format (${formats.join(', ')}); also chosen by the Accept header; default ${formats[0]}` },
    },
  }) as const;

export const bwaQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['year'],
  properties: { year, format: { type: 'string', enum: ['json', 'pdf'], description: 'json (default) or pdf; also by Accept header' } },
} as const;

export const submitBody = {
  type: 'object',
  additionalProperties: false,
  required: ['year', 'mode'],
  properties: {
    year,
    month,
    quarter,
    mode: { type: 'string', enum: ['test', 'live'], description: 'test: FinanzOnline checks the file without filing it; live: files the return' },
    resubmission: { type: 'boolean', description: 'File a period again in live mode (a corrected return); without it a second live submission is 409' },
  },
} as const;

const period = {
  type: 'object',
  properties: {
    kind: { type: 'string', enum: ['month', 'quarter'] },
    year: { type: 'integer' },
    month: { type: 'integer' },
    quarter: { type: 'integer' },
    start: { type: 'string', format: 'date' },
    end: { type: 'string', format: 'date' },
    label: { type: 'string', examples: ['2026-03', '2026-Q1'] },
  },
} as const;

export const vatReturnView = {
  type: 'object',
  properties: {
    form: { type: 'string', enum: ['U30', 'UStVA'], description: 'U30 for Austrian tenants, UStVA Kennzahlen for German tenants' },
    period,
    kennzahlen: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'U30: 000, 011, 017, 021, 022, 029, 006, 060, 095 (2 places). UStVA: 81, 86, 21, 41, 43 (whole euros), 66, 83',
    },
    salesByRate: { type: 'array', items: { type: 'object', properties: { taxRate: { type: 'string' }, net: money, tax: money } } },
    outputTax: money,
    inputTax: money,
    payable: { ...money, description: 'KZ 095 / Kz 83: output tax − input tax; negative = credit' },
    unclassifiedZeroRatedNet: { ...money, description: '0 % turnover that is not reverse charge; the XML refuses a non-zero value' },
    currency: { type: 'string' },
  },
} as const;

export const submissionAccepted = {
  type: 'object',
  properties: { submissionId: uuid, status: { type: 'string', enum: ['queued'] } },
} as const;

export const submissionView = {
  type: 'object',
  properties: {
    id: uuid,
    kind: { type: 'string' },
    year: { type: 'integer' },
    period: { type: 'string' },
    mode: { type: 'string', enum: ['test', 'live'] },
    resubmission: { type: 'boolean' },
    status: { type: 'string', enum: ['queued', 'submitted', 'accepted', 'rejected'] },
    portalResponse: { type: ['object', 'null'], description: "The portal's answer: { rc, msg, … }" },
    error: { type: ['string', 'null'] },
    attempts: { type: 'integer' },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
} as const;

const line = {
  type: 'object',
  properties: { current: money, prior: money, change: money, changePercent: { type: ['string', 'null'], description: 'One decimal; null when the prior value is 0' } },
} as const;
const block = {
  type: 'object',
  properties: {
    revenue: line,
    costOfGoods: line,
    grossProfit: line,
    expenses: { type: 'array', items: { type: 'object', properties: { group: { type: 'string' }, account: { type: ['string', 'null'] }, ...line.properties } } },
    totalExpenses: line,
    result: line,
  },
} as const;

export const bwaView = {
  type: 'object',
  properties: {
    year: { type: 'integer' },
    priorYear: { type: 'integer' },
    currency: { type: 'string' },
    chart: { type: 'string' },
    months: { type: 'array', items: { type: 'object', properties: { month: { type: 'integer' }, ...block.properties, cumulative: block } } },
    total: block,
  },
} as const;
