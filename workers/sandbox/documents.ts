import { documentJobs } from '../jobs/documents';
import { sandboxedProcessor } from './sandboxedProcessor';

/**
 * Sandboxed processor for the documents queue: PDF/ZUGFeRD/ebInterface rendering is CPU-bound,
 * and run in the worker's own event loop it would delay the lock renewals of every other job of
 * that process. BullMQ runs this file in child processes (see workers/worker.ts).
 */
export default sandboxedProcessor('documents', documentJobs);
