import { errorEnvelope, listOf, pageQuery, timestamp, uuid } from '../../schemas/common';

const nullable = (s: Record<string, unknown>) => ({ ...s, type: [s.type as string, 'null'] });
const STATUSES = ['queued', 'processing', 'imported', 'duplicate', 'rejected'];

export const uploadQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { supplierId: { ...uuid, description: 'The supplier to book the invoice to, when it exists (else matched by VAT ID, IBAN, name)' } },
} as const;

const binary = { type: 'string', format: 'binary' } as const;

/** The upload's request body in the OpenAPI document: the file as the body, or as the form field `file`. */
export const uploadBodyDoc = {
  description: 'The e-invoice file (at most 10 MB): as the body itself, or as the field `file` of a form',
  content: {
    'application/xml': { schema: { type: 'string', description: 'UBL, CII or ebInterface XML' } },
    'text/xml': { schema: { type: 'string' } },
    'application/pdf': { schema: { ...binary, description: 'Factur-X / ZUGFeRD PDF' } },
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['file'],
        properties: { file: { ...binary, description: 'The e-invoice; its part Content-Type (else its bytes) decide XML or PDF. Exactly one file.' } },
      },
      encoding: { file: { contentType: 'application/xml, text/xml, application/pdf, application/octet-stream' } },
    },
  },
};

export const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { status: { type: 'string', enum: STATUSES }, ...pageQuery },
} as const;

export const accepted = {
  type: 'object',
  required: ['id', 'status'],
  properties: { id: uuid, status: { type: 'string', enum: ['queued', 'duplicate'] } },
} as const;

export const incomingView = {
  type: 'object',
  properties: {
    id: uuid,
    status: { type: 'string', enum: STATUSES },
    format: nullable({ type: 'string', enum: ['ubl', 'cii', 'facturx-pdf', 'ebinterface', null] }),
    syntax: nullable({ type: 'string' }),
    profile: nullable({ type: 'string', description: 'BT-24 (or the ebInterface namespace)' }),
    mediaType: { type: 'string' },
    size: { type: 'integer' },
    invoiceId: nullable({ ...uuid, description: 'The booked incoming invoice (imported), or the one this duplicates' }),
    duplicateOf: nullable({ ...uuid, description: 'The earlier upload of the same file' }),
    valid: nullable({ type: 'boolean' }),
    errors: { type: 'array', items: { type: 'object', properties: { rule: { type: 'string' }, message: { type: 'string' } } } },
    warnings: { type: 'array', items: { type: 'string' } },
    receivedAt: timestamp,
    processedAt: nullable({ ...timestamp }),
  },
} as const;
export const incomingList = listOf(incomingView);

export const errorResponses = {
  400: { description: 'Invalid input', schema: errorEnvelope },
  401: { description: 'Authentication required', schema: errorEnvelope },
  403: { description: 'Role does not permit the operation', schema: errorEnvelope },
  404: { description: 'Not found (or another tenant’s)', schema: errorEnvelope },
};
