/** Schemas shared by several route groups (and by the OpenAPI document). */
export const uuid = { type: 'string', format: 'uuid' } as const;
export const money = { type: 'string', format: 'money', description: 'Decimal amount as a string, e.g. "1234.50"' } as const;
export const positiveMoney = {
  type: 'string',
  pattern: '^(?!0+(\\.0+)?$)\\d{1,12}(\\.\\d{1,2})?$',
  description: 'Positive decimal amount as a string with at most 2 decimals, e.g. "99.90"',
} as const;
export const isoDate = { type: 'string', format: 'date', description: 'YYYY-MM-DD' } as const;
export const timestamp = { type: 'string', format: 'date-time' } as const;

export const errorEnvelope = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['message', 'code', 'status'],
      properties: {
        message: { type: 'string' },
        code: { type: 'string' },
        status: { type: 'integer' },
        details: {
          type: 'array',
          maxItems: 20,
          description: 'At most 20 problems; detailsOmitted counts the rest',
          items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } },
        },
        detailsOmitted: { type: 'integer', minimum: 1, description: 'How many further problems were found and not listed (present only then)' },
        detailsIncomplete: {
          type: 'boolean',
          const: true,
          description: 'Input with more than 2,000 values is validated up to its first problem: there may be more than details lists',
        },
      },
    },
  },
} as const;

export const pagination = {
  type: 'object',
  properties: {
    page: { type: 'integer' },
    limit: { type: 'integer' },
    total: { type: 'integer' },
    totalPages: { type: 'integer' },
  },
} as const;

export const listOf = (item: object) => ({
  type: 'object',
  properties: { data: { type: 'array', items: item }, pagination },
});

/**
 * The lists that page by keyset (docs/lists.md): pagination also carries nextCursor, the opaque
 * position after this page's last entry; null when there is nothing after it.
 */
export const cursorPagination = {
  type: 'object',
  properties: {
    ...pagination.properties,
    nextCursor: {
      type: ['string', 'null'],
      description: 'Pass as cursor (with the same filters) for the next page; null at the end. Opaque (docs/lists.md).',
    },
  },
} as const;

export const cursorListOf = (item: object) => ({
  type: 'object',
  properties: { data: { type: 'array', items: item }, pagination: cursorPagination },
});

/** The keyset cursor of a list (docs/lists.md): nextCursor of the previous page, unchanged. */
export const cursorQuery = {
  cursor: {
    type: 'string',
    maxLength: 4000,
    description:
      'nextCursor of the previous page (same filters): the entries after it, by an index range whatever the depth; replaces page (and afterId in a sync). A cursor that is not one of this list is 400.',
  },
} as const;

/** page defaults to 1, limit to 25, limit max 100 (decisions.md); out of range is 400. */
export const pageQuery = {
  page: { type: 'integer', minimum: 1, maximum: 1000000, default: 1 },
  limit: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
} as const;

/**
 * The incremental sync of a list (docs/sync.md): rows changed at or after updatedSince, deleted
 * ones included (deletedAt set), ordered by (updatedAt, id); with afterId, strictly after that row.
 */
export const syncQuery = {
  updatedSince: {
    type: 'string',
    format: 'date-time',
    description: 'ISO 8601 time: only records changed at or after it, deleted ones included (deletedAt set), oldest change first (docs/sync.md)',
  },
  afterId: {
    type: 'string',
    format: 'uuid',
    description:
      'With updatedSince: only records after this one in (updatedAt, id) order; pass the last record of the previous page (its updatedAt as updatedSince)',
  },
} as const;
