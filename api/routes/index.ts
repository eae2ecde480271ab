import type Router from '@koa/router';
import { healthRouter } from './health/router';
import { reportsRouter } from './reports/router';
import { maintenanceRouter } from './maintenance/router';
import { aiRouter } from './ai/router';
import { authRouter } from './auth/router';
import { wellKnownRouter } from './wellKnown/router';
import { usersRouter } from './users/router';
import { apiKeysRouter } from './apiKeys/router';
import { settingsRouter } from './settings/router';
import { customersRouter } from './customers/router';
import { suppliersRouter } from './suppliers/router';
import { invoicesRouter } from './invoices/router';
import { invoiceDocumentsRouter } from './invoiceDocuments/router';
import { docsRouter } from './docs/router';
import { connectorsRouter } from './connectors/router';
import { paymentImportRouter } from './paymentImport/router';
import { taxRouter } from './tax/router';
import { incomingEinvoicesRouter, invoiceOriginalRouter } from './incomingEinvoices/router';
import { webhookSubscriptionsRouter } from './webhookSubscriptions/router';
import { recurringInvoicesRouter } from './recurringInvoices/router';
import { bankStatementsRouter, bankTransactionsRouter } from './bankStatements/router';
import { dunningNoticesRouter, dunningRouter, invoiceDunningRouter } from './dunning/router';

/** Every route group of the API. A new group is one import and one entry here. */
export const routers: Router[] = [
  healthRouter,
  maintenanceRouter,
  aiRouter,
  authRouter,
  wellKnownRouter,
  usersRouter,
  apiKeysRouter,
  settingsRouter,
  customersRouter,
  suppliersRouter,
  invoicesRouter,
  invoiceDocumentsRouter,
  docsRouter,
  reportsRouter,
  connectorsRouter,
  paymentImportRouter,
  taxRouter,
  incomingEinvoicesRouter,
  invoiceOriginalRouter,
  webhookSubscriptionsRouter,
  recurringInvoicesRouter,
  bankStatementsRouter,
  bankTransactionsRouter,
  dunningRouter,
  invoiceDunningRouter,
  dunningNoticesRouter,
];
