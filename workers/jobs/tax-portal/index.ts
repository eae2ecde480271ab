import type { HandlersOf } from '../../types';
import { jobs } from '../../../shared/jobs/catalog';
import { submitU30Job } from './submitU30';

/** The handlers of the catalog's tax-portal jobs (shared/jobs/catalog.ts), by job name. */
export const taxPortalJobs = {
  [jobs.submitU30.name]: submitU30Job,
} satisfies HandlersOf<'tax-portal'>;
