import type { HandlersOf } from '../../types';
import { jobs } from '../../../shared/jobs/catalog';
import { renderInvoiceDocumentJob } from './renderInvoiceDocument';
import { importIncomingEinvoiceJob } from '../einvoices/importIncomingEinvoice';
import { importBankStatementJob } from '../bank-statements/importBankStatement';

/** The handlers of the catalog's documents jobs (shared/jobs/catalog.ts), by job name. */
export const documentJobs = {
  [jobs.renderInvoiceDocument.name]: renderInvoiceDocumentJob,
  [jobs.importIncomingEinvoice.name]: importIncomingEinvoiceJob,
  [jobs.importBankStatement.name]: importBankStatementJob,
} satisfies HandlersOf<'documents'>;
