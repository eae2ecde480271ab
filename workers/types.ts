import type { Job } from 'bullmq';

export type JobHandler = (job: Job) => Promise<unknown>;
/** Handlers of one queue, keyed by job name. */
export type JobHandlers = Record<string, JobHandler>;
