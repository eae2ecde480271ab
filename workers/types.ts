import type { Job } from 'bullmq';
import type { QueueName } from '../shared/queues';
import type { JobPayload, Jobs, JobKey } from '../shared/jobs/catalog';

/** A job's handler, typed by its catalog entry's payload (checked against the schema before it runs). */
export type JobHandler<P = unknown> = (job: Job<P>) => Promise<unknown>;

/**
 * The catalog's jobs on queue Q, each mapped by its job name to its handler, typed by its payload:
 * one key per entry, no more, no less (workers/jobs/<queue>/index.ts `satisfies` it).
 */
export type HandlersOf<Q extends QueueName> = {
  [K in JobKey as Jobs[K]['queue'] extends Q ? Jobs[K]['name'] : never]: JobHandler<JobPayload<K>>;
};

/** The queues the catalog has jobs on. */
export type CatalogQueue = Jobs[JobKey]['queue'];

/** Handlers of one queue, keyed by job name. */
// biome-ignore lint/suspicious/noExplicitAny: handlers of different payloads side by side; each is typed by its HandlersOf entry
export type QueueHandlers = Record<string, JobHandler<any>>;
