import { emailJobs } from '../jobs/email';
import { sandboxedProcessor } from './sandboxedProcessor';

/**
 * Sandboxed processor for the email queue: a send renders its PDF or ZUGFeRD attachment when the
 * artifact cache has none, and a long invoice takes seconds of CPU. In the worker's own event loop
 * that would delay the lock renewals of every other job of the process (see documents.ts).
 */
export default sandboxedProcessor('email', emailJobs);
