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
    resubmission: {
      type: 'boolean',
      description: 'File months again in live mode (a corrected return); without it a live submission overlapping an accepted or in-flight one is 409',
    },
  },
} as const;

const period = {
  type: 'object',
  'x-optional': ['month', 'quarter'],
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
      description:
        'U30 (2 places): always 000, 011, 017, 021, 022, 029, 006, 060, 095; when not zero 016, 019, 020, 057, 066, 070, 072, 073, 008, 065. ' +
        'UStVA: always 81, 86, 21, 41, 43 (whole euros), 66, 83 (cents); when not zero 45, 46, 48, 87, 89, 93 (whole euros), 47, 61, 67 (cents)',
    },
    salesByRate: { type: 'array', items: { type: 'object', properties: { taxRate: { type: 'string' }, net: money, tax: money } } },
    outputTax: money,
    inputTax: money,
    payable: { ...money, description: 'KZ 095 / Kz 83: output tax − input tax; negative = credit' },
    unclassifiedZeroRatedNet: { ...money, description: '0 % turnover without a VAT situation (legacy lines); the XML refuses a non-zero value' },
    currency: { type: 'string' },
  },
} as const;

const zmAmounts = { supplies: money, services: money, triangular: money } as const;

export const zmView = {
  type: 'object',
  properties: {
    form: { type: 'string', enum: ['ZM'] },
    period,
    lines: {
      type: 'array',
      description: 'One line per buyer VAT ID (normalized, sorted); buyers whose amounts net to zero are left out',
      items: { type: 'object', properties: { vatId: { type: 'string' }, ...zmAmounts } },
    },
    totals: { type: 'object', properties: zmAmounts },
    currency: { type: 'string', enum: ['EUR'] },
  },
} as const;

export const resolveBody = {
  type: 'object',
  additionalProperties: false,
  required: ['outcome'],
  properties: {
    outcome: {
      type: 'string',
      enum: ['accepted', 'rejected'],
      description: 'What the FinanzOnline DataBox shows: accepted = the return arrived; rejected = it did not',
    },
    note: { type: 'string', maxLength: 1000, description: 'Why (e.g. the protocol number from the DataBox)' },
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
    outcomeUnknown: {
      type: 'boolean',
      description: 'true: a live upload was interrupted after it left and the job stopped; status stays submitted until an admin resolves it',
    },
    resolution: {
      type: ['object', 'null'],
      description: 'Set when an admin resolved an unknown outcome by hand',
      properties: {
        outcome: { type: 'string', enum: ['accepted', 'rejected'] },
        by: { type: ['string', 'null'] },
        at: timestamp,
        note: { type: ['string', 'null'] },
      },
    },
    portalResponse: { type: ['object', 'null'], description: "The portal's answer: { rc, msg, … }" },
    error: { type: ['string', 'null'] },
    attempts: { type: 'integer' },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
} as const;

const line = {
  type: 'object',
  properties: {
    current: money,
    prior: money,
    change: money,
    changePercent: { type: ['string', 'null'], description: 'One decimal; null when the prior value is 0' },
  },
} as const;
const block = {
  type: 'object',
  properties: {
    revenue: line,
    costOfGoods: line,
    grossProfit: line,
    expenses: {
      type: 'array',
      description: 'One line per expense account, as in the general ledger and the DATEV export',
      items: {
        type: 'object',
        properties: {
          group: { type: 'string', description: '"<account> <name>", e.g. "7600 Büromaterial"' },
          account: { type: 'string' },
          name: { type: ['string', 'null'] },
          ...line.properties,
        },
      },
    },
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
