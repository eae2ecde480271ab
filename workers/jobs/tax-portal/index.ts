import type { JobHandlers } from '../../types';
import { SUBMIT_U30_JOB } from '../../../shared/commands/submitVatReturn';
import { submitU30Job } from './submitU30';

export const taxPortalJobs: JobHandlers = {
  [SUBMIT_U30_JOB]: submitU30Job,
};
