import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { createTeam } from '../helpers/factories';
import { storePendingBankEvent, workersPerTest } from '../helpers/webhookFactory';
import { config } from '../../shared/config';
import { db } from '../../shared/db';
import { getQueue, QUEUES } from '../../shared/queues';
import { createRedis } from '../../shared/redis';
import { startWorkers } from '../../workers/worker';
import { sweepStuckWebhookEventsJob } from '../../workers/jobs/maintenance/sweepStuckWebhookEvents';
import { maintenanceJobs } from '../../workers/jobs/maintenance';

/**
 * The maintenance sweep of webhook rows left pending by a lost or dead job, tested by calling its
 * job handler. Rows are stored as ingest stores them (verified, normalized, pending), received in
 * the past; each test narrows the sweep to its own tenant, as the test database is shared.
 */
const queue = () => getQueue(QUEUES.webhooks);
const running = workersPerTest();

const storePending = (tenantId: string, minutesAgo: number) => storePendingBankEvent(tenantId, { minutesAgo });

const sweep = (tenantId: string, over: Record<string, unknown> = {}) => sweepStuckWebhookEventsJob({ data: { tenantId, ...over } } as unknown as Job);

async function waitForStatus(id: string, status: string) {
  for (const deadline = Date.now() + 30_000; ; ) {
    const row = await db()('webhookEvents').where({ id }).first();
    if (row.status === status) return row;
    if (Date.now() > deadline) throw new Error(`row ${id} is ${row.status}, expected ${status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('sweep-stuck-webhook-events', () => {
  it('is registered as a maintenance job', () => {
    expect(maintenanceJobs['sweep-stuck-webhook-events']).toBe(sweepStuckWebhookEventsJob);
  });

  it('a job lost from Redis is queued again under its business key and the event is booked once; a second sweep does nothing', async () => {
    const { tenant } = await createTeam();
    const lost = await storePending(tenant.id, 30);
    const fresh = await storePending(tenant.id, 1); // within staleAfter: its job may just be queued
    expect(await queue().getJob(lost.jobId)).toBeUndefined();

    expect(await sweep(tenant.id)).toEqual({ requeued: 1, retried: 0, inFlight: 0, failed: 0 });
    const job = await queue().getJob(lost.jobId);
    expect(job?.data).toEqual({ eventRowId: lost.eventRowId, tenantId: tenant.id });
    expect(await queue().getJob(fresh.jobId)).toBeUndefined();
    // Idempotent: the job is waiting now, so a second run leaves it alone.
    expect(await sweep(tenant.id)).toEqual({ requeued: 0, retried: 0, inFlight: 1, failed: 0 });

    running.workers = await startWorkers({ queues: ['webhooks'], schedule: false });
    const row = await waitForStatus(lost.eventRowId, 'processed');
    const invoices = await db()('invoices').where({ tenantId: tenant.id });
    expect(invoices.map((i) => [i.externalId, i.totalGross])).toEqual([[lost.event.externalId, '42.00']]);
    expect(row.invoiceId).toBe(invoices[0].id);
    // Finished rows are not swept again.
    expect(await sweep(tenant.id)).toEqual({ requeued: 0, retried: 0, inFlight: 0, failed: 0 });
  });

  it('a job BullMQ failed outside processWebhookEvent (stall limit) is retried with fresh attempts; re-adding would be a no-op', async () => {
    const { tenant } = await createTeam();
    const stuck = await storePending(tenant.id, 30);
    await queue().add('process-webhook-event', { eventRowId: stuck.eventRowId, tenantId: tenant.id }, { jobId: stuck.jobId, attempts: 1 });
    // A worker that dies the way a stalled job does: the job ends failed and the row stays pending.
    const dying = new Worker(
      QUEUES.webhooks,
      async () => {
        throw new UnrecoverableError('job stalled more than allowable limit');
      },
      { connection: createRedis('worker'), prefix: config().redisPrefix },
    );
    try {
      for (const deadline = Date.now() + 30_000; (await (await queue().getJob(stuck.jobId))!.getState()) !== 'failed'; ) {
        if (Date.now() > deadline) throw new Error('job never failed');
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await dying.close();
    }
    expect((await db()('webhookEvents').where({ id: stuck.eventRowId }).first()).status).toBe('pending');
    // BullMQ ignores an add whose id exists: that is why the sweep retries instead.
    await queue().add('process-webhook-event', { eventRowId: stuck.eventRowId, tenantId: tenant.id }, { jobId: stuck.jobId });
    expect(await (await queue().getJob(stuck.jobId))!.getState()).toBe('failed');

    expect(await sweep(tenant.id)).toEqual({ requeued: 0, retried: 1, inFlight: 0, failed: 0 });
    const retried = (await queue().getJob(stuck.jobId))!;
    expect(await retried.getState()).toBe('waiting');
    expect(retried.attemptsMade).toBe(0);

    running.workers = await startWorkers({ queues: ['webhooks'], schedule: false });
    await waitForStatus(stuck.eventRowId, 'processed');
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(1);
  });

  it('a row pending past the maximum age is failed with the reason; a delayed job (backoff) is left alone', async () => {
    const { tenant } = await createTeam();
    const ancient = await storePending(tenant.id, 25 * 60);
    const backingOff = await storePending(tenant.id, 30);
    await queue().add('process-webhook-event', { eventRowId: backingOff.eventRowId, tenantId: tenant.id }, { jobId: backingOff.jobId, delay: 3600_000 });

    expect(await sweep(tenant.id)).toEqual({ requeued: 0, retried: 0, inFlight: 1, failed: 1 });
    const failed = await db()('webhookEvents').where({ id: ancient.eventRowId }).first();
    expect(failed).toMatchObject({ status: 'failed' });
    expect(failed.error).toMatch(/not processed within 24 h/);
    expect(failed.processedAt).not.toBeNull();
    expect(await queue().getJob(ancient.jobId)).toBeUndefined();
    expect(await (await queue().getJob(backingOff.jobId))!.getState()).toBe('delayed');
    expect((await db()('webhookEvents').where({ id: backingOff.eventRowId }).first()).status).toBe('pending');
    // Shorter ages from the job data: the backing-off row is now past the maximum too.
    expect(await sweep(tenant.id, { maxAgeHours: 0.25 })).toEqual({ requeued: 0, retried: 0, inFlight: 0, failed: 1 });
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(0);
  });

  it('only the given tenant is swept', async () => {
    const a = await createTeam();
    const b = await createTeam();
    const rowB = await storePending(b.tenant.id, 30);
    expect(await sweep(a.tenant.id)).toEqual({ requeued: 0, retried: 0, inFlight: 0, failed: 0 });
    expect(await queue().getJob(rowB.jobId)).toBeUndefined();
  });
});
