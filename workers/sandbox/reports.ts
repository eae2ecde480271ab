import { reportJobs } from '../jobs/reports';
import { sandboxedProcessor } from './sandboxedProcessor';

/** Sandboxed processor for the reports queue: report PDFs are CPU-bound like invoice documents. */
export default sandboxedProcessor('reports', reportJobs);
