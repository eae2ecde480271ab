import type { JobHandlers } from '../../types';
import { sendInvoiceEmailJob } from './sendInvoiceEmail';

export const emailJobs: JobHandlers = {
  'send-invoice-email': sendInvoiceEmailJob,
};
