import { errorEnvelope, isoDate, listOf, money, pageQuery, positiveMoney, timestamp, uuid } from '../../schemas/common';
import { BANK_TRANSACTION_STATUSES } from '../../../shared/models/BankTransaction';

const nullable = (s: Record<string, unknown>) => ({ ...s, type: [s.type as string, 'null'] });
const FLAGS = { type: 'array', items: { type: 'string', enum: ['unknownAccount', 'foreignCurrency', 'reversal', 'overpaid'] } } as const;

const binary = { type: 'string', format: 'binary' } as const;

/** The upload's request body in the OpenAPI document: the file as the body, or as the form field `file`. */
export const uploadBodyDoc = {
  description: 'The statement file (at most 20 MB): camt.053 XML or MT940 text, as the body itself or as the field `file` of a form',
  content: {
    'application/xml': { schema: { type: 'string', description: 'camt.053.001.02 … .13 (ISO 20022 BankToCustomerStatement)' } },
    'text/xml': { schema: { type: 'string' } },
    'text/plain': { schema: { type: 'string', description: 'MT940 (SWIFT), with the German :86: subfields (DK format) or free text' } },
    'application/octet-stream': { schema: { ...binary, description: 'Either; the bytes decide' } },
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['file'],
        properties: { file: { ...binary, description: 'The statement; its bytes decide camt.053 or MT940. Exactly one file.' } },
      },
      encoding: { file: { contentType: 'application/xml, text/xml, text/plain, application/octet-stream' } },
    },
  },
};

export const accepted = {
  type: 'object',
  required: ['id', 'status'],
  properties: { id: uuid, status: { type: 'string', enum: ['queued'] } },
} as const;

export const statementView = {
  type: 'object',
  properties: {
    id: uuid,
    status: { type: 'string', enum: ['queued', 'processing', 'imported', 'rejected'] },
    format: nullable({ type: 'string', description: 'camt.053.001.08, mt940, …' }),
    statementRef: nullable({ type: 'string', description: 'The statement id (camt Stmt/Id, MT940 :20:)' }),
    account: nullable({ type: 'string' }),
    accountIban: nullable({ type: 'string' }),
    currency: nullable({ type: 'string' }),
    error: nullable({ type: 'string', description: 'Why the file was rejected' }),
    warnings: { type: 'array', items: { type: 'string' } },
    flags: FLAGS,
    counts: {
      type: 'object',
      description:
        'entries: booked entries in the file; new: stored by this file; duplicates: stored before (overlapping statements); matched/unmatched/ignored: of the new ones, now',
      properties: {
        entries: { type: 'integer' },
        new: { type: 'integer' },
        duplicates: { type: 'integer' },
        matched: { type: 'integer' },
        unmatched: { type: 'integer' },
        ignored: { type: 'integer' },
      },
    },
    size: { type: 'integer' },
    receivedAt: timestamp,
    processedAt: nullable({ ...timestamp }),
  },
} as const;

export const transactionView = {
  type: 'object',
  properties: {
    id: uuid,
    statementId: uuid,
    status: { type: 'string', enum: BANK_TRANSACTION_STATUSES },
    bookingDate: isoDate,
    valueDate: nullable({ ...isoDate }),
    amount: { ...money, description: 'Positive; direction says which way' },
    direction: { type: 'string', enum: ['credit', 'debit'] },
    currency: { type: 'string' },
    reversal: { type: 'boolean' },
    counterpartyName: nullable({ type: 'string' }),
    counterpartyIban: nullable({ type: 'string' }),
    remittance: nullable({ type: 'string' }),
    creditorReference: nullable({ type: 'string' }),
    endToEndId: nullable({ type: 'string' }),
    entryReference: nullable({ type: 'string' }),
    account: { type: 'string' },
    flags: FLAGS,
    note: nullable({ type: 'string', description: 'Why it was not matched, or what stays unapplied' }),
    invoiceId: nullable({ ...uuid }),
    paymentId: nullable({ ...uuid }),
    matchedAmount: nullable({ ...money }),
    matchRule: nullable({ type: 'string', enum: ['reference', 'number', 'amountAndPayer', 'manual', null] }),
  },
} as const;
export const transactionList = listOf(transactionView);

export const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: BANK_TRANSACTION_STATUSES },
    statementId: uuid,
    from: { ...isoDate, description: 'Booking date from (inclusive)' },
    to: { ...isoDate, description: 'Booking date to (inclusive)' },
    ...pageQuery,
  },
} as const;

export const matchBody = {
  type: 'object',
  additionalProperties: false,
  required: ['invoiceId'],
  properties: {
    invoiceId: uuid,
    amount: { ...positiveMoney, description: 'Defaults to the smaller of the transaction and the amount due; more than either is 422' },
  },
} as const;

export const errorResponses = {
  400: { description: 'Invalid input', schema: errorEnvelope },
  401: { description: 'Authentication required', schema: errorEnvelope },
  403: { description: 'Role does not permit the operation', schema: errorEnvelope },
  404: { description: 'Not found (or another tenant’s)', schema: errorEnvelope },
};
