import { createRouter } from '../../routing';
import { enqueue, getQueue, QUEUES } from '../../../shared/queues';
import { jobs } from '../../../shared/jobs/catalog';
import { notFound } from '../../../shared/errors';

/** Tenant-scoped housekeeping an admin may trigger; jobs run in the worker fleet. */
export const { router: maintenanceRouter, add } = createRouter('/api/maintenance', 'Maintenance');

const jobState = {
  type: 'object',
  // A queued job has no result yet; only a failed one has a failedReason (api/responseSchemas.ts).
  'x-optional': ['result', 'failedReason'],
  properties: { jobId: { type: 'string' }, name: { type: 'string' }, status: { type: 'string' }, result: {}, failedReason: { type: 'string' } },
};

add({
  method: 'post',
  path: '/purge-customers',
  auth: 'admin',
  summary: 'Permanently remove customers soft-deleted more than 7 years ago (runs in a worker)',
  responses: { 202: { description: 'Queued', schema: jobState }, 503: { description: 'Queue unavailable' } },
  handler: async (ctx) => {
    const tenantId = ctx.state.actor.tenantId;
    // Every request is a run of its own (the job id holds the time, shared/jobs/catalog.ts): the
    // purge is idempotent, so two overlapping runs delete each customer once.
    const job = await enqueue(jobs.purgeDeletedCustomers, { tenantId });
    ctx.status = 202;
    ctx.body = { jobId: job.id, name: job.name, status: 'queued' };
  },
});

add({
  method: 'get',
  path: '/jobs/:key',
  auth: 'admin',
  summary: 'State of a maintenance job started by this tenant',
  responses: { 200: { description: 'Job state', schema: jobState }, 404: { description: 'Unknown job' } },
  handler: async (ctx) => {
    const queue = getQueue(QUEUES.maintenance);
    // State first, then the job's hash: BullMQ writes the state and the return value in one
    // step, so a job read after "completed" always carries its result. Read the other way round,
    // a job that finishes in between looks completed with no result.
    const status = await queue.getJobState(ctx.input.params.key);
    const job = await queue.getJob(ctx.input.params.key);
    if (!job || job.data?.tenantId !== ctx.state.actor.tenantId) throw notFound('Job');
    ctx.body = {
      jobId: job.id,
      name: job.name,
      status,
      result: job.returnvalue ?? null,
      ...(job.failedReason ? { failedReason: 'The job failed; operators can see details in Bull Board' } : {}),
    };
  },
});
