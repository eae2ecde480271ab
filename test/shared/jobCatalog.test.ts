import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { catalogEntries, findJob, jobs, type JobPayload, type SendInvoiceEmailPayload } from '../../shared/jobs/catalog';
import { payloadError } from '../../shared/jobs/define';
import { renderJobId } from '../../shared/documents/kinds';
import { enqueue, getQueue, QUEUES, type QueueName } from '../../shared/queues';
import { registry } from '../../workers/registry';
import type { QueueHandlers } from '../../workers/types';
import { startWorkers, type RunningWorkers } from '../../workers/worker';
import { waitUntil } from '../helpers/waitUntil';

/**
 * The job catalog (shared/jobs/catalog.ts, docs/jobs.md): one entry per job, one handler per
 * entry, ids that stay the stored business keys, and a payload its schema refuses failed for good
 * by a real worker before its handler runs.
 */
const handlersOf = (queue: string) => (registry as Partial<Record<string, QueueHandlers>>)[queue];

describe('job catalog', () => {
  it('every catalog entry has its handler in the worker registry, and every handler its entry', () => {
    for (const [key, def] of catalogEntries) {
      expect(typeof handlersOf(def.queue)?.[def.name], `${key} (${def.queue}/${def.name})`).toBe('function');
      expect(findJob(def.queue, def.name)?.key).toBe(key);
    }
    for (const [queue, handlers] of Object.entries(registry)) {
      for (const name of Object.keys(handlers)) expect(findJob(queue, name), `${queue}/${name}`).toBeDefined();
    }
    expect(Object.keys(registry).sort()).toEqual([...new Set(catalogEntries.map(([, d]) => d.queue))].sort());
  });

  it('job ids are the legacy business keys, byte for byte', () => {
    const id = '0b9e4c1e-5a7f-4f43-9d2a-3c1b2a6e7f10';
    const tenantId = 'd6c1a3f0-2b4e-4c8d-9e7f-1a2b3c4d5e6f';
    expect(jobs.processWebhookEvent.jobId({ eventRowId: id, tenantId })).toBe(`webhook-${id}`);
    expect(jobs.sendInvoiceEmail.jobId({ deliveryId: id, tenantId })).toBe(`email-${id}`);
    expect(jobs.submitU30.jobId({ submissionId: id, tenantId })).toBe(`u30-${id}`);
    expect(jobs.deliverWebhook.jobId({ deliveryId: id, tenantId })).toBe(`outbound-webhook-${id}`);
    expect(jobs.notifyWebhookDisabled.jobId({ subscriptionId: id, tenantId, disabledAt: 1764230400000 })).toBe(`webhook-disabled-${id}-1764230400000`);
    expect(jobs.renderInvoiceDocument.jobId({ tenantId, invoiceId: id, kind: 'zugferd', version: 7 })).toBe(`render-zugferd-${id}-v7`);
    expect(jobs.renderInvoiceDocument.jobId({ tenantId, invoiceId: id, kind: 'pdf', version: 1 })).toBe(renderJobId('pdf', id, 1));
    expect(jobs.renderReportPdf.jobId({ tenantId, report: 'u30', year: 2026, month: 3, fingerprint: 'f00d' })).toBe(`report-u30-${tenantId}-2026-03-f00d`);
    expect(jobs.renderReportPdf.jobId({ tenantId, report: 'u30', year: 2026, quarter: 2, fingerprint: 'f00d' })).toBe(`report-u30-${tenantId}-2026-Q2-f00d`);
    expect(jobs.renderReportPdf.jobId({ tenantId, report: 'bwa', year: 2025, fingerprint: 'beef' })).toBe(`report-bwa-${tenantId}-2025-beef`);
    vi.spyOn(Date, 'now').mockReturnValue(1_764_230_400_000);
    try {
      expect(jobs.purgeDeletedCustomers.jobId({ tenantId })).toBe(`purge-customers-${tenantId}-1764230400000`);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('names and queues are the ones stored in Redis and outbox rows', () => {
    expect(Object.fromEntries(catalogEntries.map(([key, d]) => [key, `${d.queue}/${d.name}`]))).toEqual({
      renderInvoiceDocument: 'documents/render-invoice-document',
      importIncomingEinvoice: 'documents/import-incoming-einvoice',
      importBankStatement: 'documents/import-bank-statement',
      sendInvoiceEmail: 'email/send-invoice-email',
      sendPasswordResetEmail: 'email/send-password-reset-email',
      sendAccountNotice: 'email/send-account-notice',
      submitU30: 'tax-portal/submit-u30',
      renderReportPdf: 'reports/render-report-pdf',
      processWebhookEvent: 'webhooks/process-webhook-event',
      purgeDeletedCustomers: 'maintenance/purge-deleted-customers',
      relayOutbox: 'maintenance/relay-outbox',
      purgeIdempotencyKeys: 'maintenance/purge-idempotency-keys',
      sweepStuckWebhookEvents: 'maintenance/sweep-stuck-webhook-events',
      purgeUnknownLoginAttempts: 'maintenance/purge-unknown-login-attempts',
      purgeSentOutbox: 'maintenance/purge-sent-outbox',
      fetchEcbRates: 'maintenance/fetch-ecb-rates',
      runRecurringInvoices: 'maintenance/run-recurring-invoices',
      dunningDaily: 'maintenance/dunning-daily',
      runDunning: 'maintenance/run-dunning',
      deliverWebhook: 'outbound-webhooks/deliver-webhook',
      purgeWebhookEvents: 'maintenance/purge-webhook-events',
      notifyWebhookDisabled: 'email/notify-webhook-disabled',
    });
  });

  it('payload types follow the entries', () => {
    expectTypeOf<JobPayload<'sendInvoiceEmail'>>().toEqualTypeOf<SendInvoiceEmailPayload>();
    expectTypeOf(jobs.sendInvoiceEmail.jobId).parameter(0).toEqualTypeOf<SendInvoiceEmailPayload>();
    // @ts-expect-error a producer cannot add a payload its entry does not declare
    void (() => enqueue(jobs.submitU30, { tenantId: 'x' }));
  });

  it('schemas accept what the producers and schedulers write, and refuse the rest with ajv’s message', () => {
    const uuid = randomUUID();
    expect(payloadError(jobs.processWebhookEvent, { eventRowId: uuid, tenantId: uuid })).toBeNull();
    expect(payloadError(jobs.sendInvoiceEmail, { deliveryId: uuid, tenantId: uuid })).toBeNull();
    expect(
      payloadError(jobs.sendInvoiceEmail, { deliveryId: uuid, tenantId: uuid, accepted: { smtpResponse: '250 OK', messageId: '<m@x>', notice: null } }),
    ).toBeNull();
    expect(payloadError(jobs.renderReportPdf, { tenantId: uuid, report: 'u30', year: 2026, quarter: 1, fingerprint: 'ab' })).toBeNull();
    expect(payloadError(jobs.renderReportPdf, { tenantId: uuid, report: 'bwa', year: 2026, fingerprint: 'ab' })).toBeNull();
    // Scheduled maintenance jobs are added with {}.
    // (run-dunning is added only by the daily fan-out and the run route, with its tenant and day.)
    for (const [, def] of catalogEntries.filter(([k, d]) => d.queue === QUEUES.maintenance && k !== 'runDunning'))
      expect(payloadError(def, {}), def.name).toBeNull();
    expect(payloadError(jobs.runDunning, { tenantId: uuid, day: '2026-11-27', runId: 'a1b2' })).toBeNull();
    expect(payloadError(jobs.runDunning, { tenantId: uuid, day: '27.11.2026' })).toMatch(/payload\/day must match pattern/);
    expect(payloadError(jobs.processWebhookEvent, { eventRowId: uuid })).toBe("payload must have required property 'tenantId'");
    expect(payloadError(jobs.renderInvoiceDocument, { tenantId: uuid, invoiceId: uuid, kind: 'pdf', version: '1' })).toMatch(
      /payload\/version must be integer/,
    );
    expect(payloadError(jobs.runRecurringInvoices, { tenantId: uuid, asOf: '2026-11-27', runId: 'a1b2' })).toBeNull();
    expect(payloadError(jobs.runRecurringInvoices, { asOf: '27.11.2026' })).toMatch(/payload\/asOf must match pattern/);
    expect(payloadError(jobs.relayOutbox, [])).toBe('payload must be object');
    // Keys a job does not read are tolerated (a payload may gain one across a rolling deploy).
    expect(payloadError(jobs.processWebhookEvent, { eventRowId: uuid, tenantId: uuid, jobId: 'x' })).toBeNull();
  });

  it('application code adds jobs only through the catalog', () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((f) => {
        const p = path.join(dir, f);
        return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
      });
    const raw = /\benqueue\(\s*QUEUES\.|\brunAndWait(<[^>]*>)?\(\s*QUEUES\.|\benqueueAfterCommit\(\s*\w+\s*,\s*\{/;
    const offenders = ['api', 'shared', 'workers']
      .flatMap((d) => files(path.join(root, d)))
      .filter((f) => raw.test(readFileSync(f, 'utf8')))
      .map((f) => path.relative(root, f));
    expect(offenders).toEqual([]);
  });
});

describe('a payload its schema refuses, through a real worker', () => {
  let running: RunningWorkers | undefined;
  afterAll(async () => {
    await running?.close();
  });

  const failsForGood = async (queue: QueueName, name: string, data: object) => {
    const jobId = `catalog-bad-${randomUUID()}`;
    // Three attempts allowed: the refusal must not use more than one.
    await enqueue(queue, name, data, { jobId, attempts: 3, backoff: { type: 'fixed', delay: 10 } });
    await waitUntil(async () => (await getQueue(queue).getJobState(jobId)) === 'failed', `${name} to fail`, 60_000, 50);
    const job = (await getQueue(queue).getJob(jobId))!;
    expect(job.attemptsMade, `attempts' errors: ${(job.stacktrace ?? []).join('\n---\n')}`).toBe(1);
    return job.failedReason;
  };

  it('fails for good at its first attempt, in-process and in a sandboxed child, with the ajv message', async () => {
    running = await startWorkers({ queues: [QUEUES.documents, QUEUES.reports], schedule: false, relay: false, sandbox: true });
    // documents and reports are both sandboxed queues; the in-process dispatcher is checked by maintenance below.
    expect(await failsForGood(QUEUES.documents, jobs.renderInvoiceDocument.name, { tenantId: 'x', invoiceId: 'y', kind: 'docx', version: 1 })).toBe(
      'Invalid payload for job "render-invoice-document" on queue "documents": payload/kind must be equal to one of the allowed values',
    );
    expect(await failsForGood(QUEUES.reports, jobs.renderReportPdf.name, { tenantId: 'x', report: 'u30', year: '2026', fingerprint: 'f' })).toMatch(
      /^Invalid payload for job "render-report-pdf" on queue "reports": payload\/year must be integer/,
    );
    await running.close();
    running = await startWorkers({ queues: [QUEUES.maintenance], schedule: false, relay: false });
    expect(await failsForGood(QUEUES.maintenance, jobs.purgeDeletedCustomers.name, { tenantId: 42 })).toBe(
      'Invalid payload for job "purge-deleted-customers" on queue "maintenance": payload/tenantId must be string',
    );
  });
});
