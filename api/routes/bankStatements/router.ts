import { createRouter } from '../../routing';
import { errorEnvelope } from '../../schemas/common';
import { runInTransaction } from '../../../shared/outbox';
import { db } from '../../../shared/db';
import type { BankTransactionStatus } from '../../../shared/models/BankTransaction';
import { receiveBankStatement } from '../../../shared/commands/bankStatements/receive';
import { ignoreBankTransaction, matchBankTransaction, unmatchBankTransaction } from '../../../shared/commands/bankStatements/match';
import { getBankStatement, getBankTransaction, listBankTransactions } from '../../../shared/queries/bankStatements';
import { MAX_STATEMENT_BYTES } from '../../../shared/formats/camt/readCamt053';
import { sniffBankStatement } from '../../../shared/formats/bankStatement';
import { fileUpload } from '../incomingEinvoices/body';
import { accepted, errorResponses, listQuery, matchBody, statementView, transactionList, transactionView, uploadBodyDoc } from './schemas';

/**
 * Bank statements (camt.053, MT940) in, their entries matched to invoices
 * (docs/bank-statements.md). The upload goes through the e-invoice upload's reader with its own
 * limit and types: one body reader for files.
 */
export const { router: bankStatementsRouter, add } = createRouter('/api/bank-statements', 'Bank statements');

const readStatementUpload = fileUpload({
  maxBytes: MAX_STATEMENT_BYTES,
  mediaTypes: ['application/xml', 'text/xml', 'text/plain', 'application/octet-stream'],
  typesText: 'application/xml, text/xml (camt.053), text/plain (MT940) or application/octet-stream',
  what: 'the statement file',
  sniff: (bytes) => {
    const kind = sniffBankStatement(bytes);
    return kind === 'camt' ? 'application/xml' : kind === 'mt940' ? 'text/plain' : null;
  },
  sniffRefusal: 'neither camt.053 XML nor MT940; send a camt.053 or MT940 statement',
});

add({
  method: 'post',
  path: '/',
  auth: 'member',
  rawBody: true,
  summary: 'Upload a bank statement (camt.053 or MT940) for import and matching',
  description:
    'Body: the file itself (application/xml or text/xml for camt.053, text/plain for MT940, or application/octet-stream) or multipart/form-data ' +
    'with the file in the field `file`. At most 20 MB (413); other types, or bytes that are neither XML nor MT940, 415. The file is stored and ' +
    'imported by a background job: poll GET /api/bank-statements/{id}. Each booked entry is stored once, however many statements list it; ' +
    'new entries are matched to open invoices (docs/bank-statements.md). A file that cannot be read ends as status rejected with the reason in error.',
  rawBodyDoc: uploadBodyDoc,
  before: [readStatementUpload],
  responses: {
    202: { description: 'Stored and queued', schema: accepted },
    413: { description: 'File over 20 MB', schema: errorEnvelope },
    415: { description: 'Not a statement type, or content that is neither camt.053 XML nor MT940', schema: errorEnvelope },
    ...errorResponses,
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    const upload = ctx.state.upload as { bytes: Buffer; mediaType: string };
    ctx.status = 202;
    ctx.body = await runInTransaction((trx) => receiveBankStatement({ trx, actor }, upload));
  },
});

add({
  method: 'get',
  path: '/:id',
  auth: 'viewer',
  summary: 'One uploaded bank statement: the state of its import and its counts',
  responses: { 200: { description: 'Statement', schema: statementView }, ...errorResponses },
  handler: async (ctx) => {
    ctx.body = await getBankStatement(db(), ctx.state.actor.tenantId, ctx.input.params.id);
  },
});

export const { router: bankTransactionsRouter, add: addTransaction } = createRouter('/api/bank-transactions', 'Bank statements');

addTransaction<unknown, { status?: BankTransactionStatus; statementId?: string; from?: string; to?: string; page: number; limit: number }>({
  method: 'get',
  path: '/',
  auth: 'viewer',
  summary: 'Booked bank entries (paged, newest booking date first), by status and booking date',
  query: listQuery,
  responses: { 200: { description: 'Transactions', schema: transactionList }, ...errorResponses },
  handler: async (ctx) => {
    ctx.body = await listBankTransactions(db(), ctx.state.actor.tenantId, ctx.input.query);
  },
});

addTransaction({
  method: 'get',
  path: '/:id',
  auth: 'viewer',
  summary: 'One booked bank entry and what it paid',
  responses: { 200: { description: 'Transaction', schema: transactionView }, ...errorResponses },
  handler: async (ctx) => {
    ctx.body = await getBankTransaction(db(), ctx.state.actor.tenantId, ctx.input.params.id);
  },
});

const unprocessable = {
  422: { description: 'Refused: see the message (matched already, overpayment, currency, invoice type or state)', schema: errorEnvelope },
};

addTransaction<{ invoiceId: string; amount?: string }>({
  method: 'post',
  path: '/:id/match',
  auth: 'member',
  summary: 'Pay an invoice from this entry (a credit a sales invoice, a debit an incoming one): payment, status and ledger posting',
  description: 'amount defaults to the smaller of the entry and the amount due; above either is 422, never an overpayment.',
  body: matchBody,
  responses: { 200: { description: 'The matched transaction', schema: transactionView }, ...unprocessable, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => matchBankTransaction({ trx, actor }, ctx.input.params.id, ctx.input.body));
  },
});

addTransaction({
  method: 'post',
  path: '/:id/ignore',
  auth: 'member',
  summary: 'Mark the entry as no invoice payment (fees, salaries, transfers); a matched one must be unmatched first (422)',
  responses: { 200: { description: 'The ignored transaction', schema: transactionView }, ...unprocessable, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => ignoreBankTransaction({ trx, actor }, ctx.input.params.id));
  },
});

addTransaction({
  method: 'post',
  path: '/:id/unmatch',
  auth: 'member',
  summary: 'Undo a match (reverses the payment and posts the reversing ledger entry) or an ignore',
  responses: { 200: { description: 'The transaction, unmatched', schema: transactionView }, ...unprocessable, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => unmatchBankTransaction({ trx, actor }, ctx.input.params.id));
  },
});
