import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { reloadConfig } from '../../shared/config';
import { closeDb, db } from '../../shared/db';
import { closeQueues, getQueue, QUEUES, type QueueName } from '../../shared/queues';
import { closeProducerRedis } from '../../shared/redis';
import { dropDatabase, ensureDatabase, startPrivateRedis, type Service } from '../../scripts/services';
import { exitOf, spawnEntry } from '../helpers/processes';
import { startTestServer } from '../helpers/server';
import { client } from '../helpers/http';
import { createTeam } from '../helpers/factories';
import { createCustomer, createDraftInvoice, sendDraft } from '../helpers/invoiceFactory';
import { startFakeSmtp, type FakeSmtp } from '../helpers/fakeSmtp';
import { startFakeFinanzOnline, type FakeFinanzOnline } from '../helpers/fakeFinanzOnline';
import { deliver, install, stripeDelivery, stripePaymentEvent } from '../helpers/webhookFactory';
import { smallAustrianBook } from '../api/reports/books';
import { bounded, waitUntil } from './faults';
import { holdArtifactKey, startWorkerProcess, waitForBlockedDocumentInsert } from './workerKill';

/**
 * Redis loses everything (FLUSHALL: what a failover to an unsynced replica or a restart of a
 * redis-server without persistence amounts to) while jobs of every kind wait in it and one runs.
 * Two worker processes keep running through it, none restarts. Their recovery loop
 * (workers/recoveryLoop.ts, shared/recovery.ts) finds in PostgreSQL what is still to do and
 * queues it again; each piece of work completes exactly once; the recurring jobs are declared
 * again. Renders need no sweep: the waiting request answers 503, its retry queues the job again.
 *
 * Isolation: its own redis-server (FLUSHALL touches no other file's keys) and its own database
 * (the sweep reads every tenant's rows; other files' rows, queued under their own Redis prefixes,
 * are none of its business).
 */
const RECOVERY = { RECOVERY_INTERVAL_MS: '2000', RECOVERY_STALE_AFTER_MS: '3000' };
/** Generous: the configured bound is 7 s (stale after 3 s + 2 × the 2 s interval); a loaded CI machine is slow. */
const BOUND_MS = 60_000;
/** A render runs in a sandboxed child that a worker may first have to start (tsx, fonts): slow on a loaded machine. */
const RENDER_BOUND_MS = 150_000;
const WEBHOOK_EVENTS = 6;
const QUEUED_EMAILS = 3;

let redis: Service;
let smtp: FakeSmtp;
let fake: FakeFinanzOnline;
let server: Awaited<ReturnType<typeof startTestServer>>;
let adminUrl: string;
const dbName = `acct_recovery_${randomBytes(4).toString('hex')}`;
const workers: Awaited<ReturnType<typeof startWorkerProcess>>[] = [];

beforeAll(async () => {
  adminUrl = process.env.TEST_ADMIN_DATABASE_URL!;
  const databaseUrl = await ensureDatabase(adminUrl, dbName);
  // migrateLatest loads .ts migrations; vitest's module loader cannot, so the release step runs them.
  const migrate = spawnEntry('scripts/migrate.ts', { DATABASE_URL: databaseUrl });
  expect((await exitOf(migrate)).code, migrate.output()).toBe(0);
  redis = await startPrivateRedis();
  smtp = await startFakeSmtp();
  fake = await startFakeFinanzOnline();
  // Before the first db() / Redis connection of this file: everything here talks to its own servers.
  Object.assign(process.env, {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    SMTP_URL: smtp.url,
    SMTP_FROM: 'Wiederherstellung GmbH <rechnung@recovery.example>',
    FINANZONLINE_SESSION_URL: fake.sessionUrl,
    FINANZONLINE_FILEUPLOAD_URL: fake.fileUploadUrl,
  });
  reloadConfig();
  server = await startTestServer({ RENDER_WAIT_MS: '4000' });
  for (let i = 0; i < 2; i++) workers.push(await startWorkerProcess(RECOVERY));
}, 180_000);

afterAll(async () => {
  for (const w of workers) {
    if (w.exitCode === null && w.signalCode === null) {
      w.kill('SIGTERM');
      await exitOf(w);
    }
  }
  await server?.close();
  await smtp?.close();
  await fake?.close();
  // Before the private Redis stops: closing them afterwards would wait for it.
  await closeQueues();
  await closeProducerRedis();
  await redis?.stop();
  await closeDb();
  if (adminUrl) await dropDatabase(adminUrl, dbName);
});

const PAUSED: QueueName[] = [QUEUES.webhooks, QUEUES.email, QUEUES.taxPortal, QUEUES.documents];
const jobsIn = async (queue: QueueName) => {
  const c = await getQueue(queue).getJobCounts('wait', 'active', 'delayed', 'prioritized');
  return Object.values(c).reduce((a, b) => a + b, 0);
};
const messagesFor = (deliveryId: string) => smtp.received.filter((m) => m.raw.includes(`delivery-${deliveryId}@`));
const schedulerKeys = async () => (await getQueue(QUEUES.maintenance).getJobSchedulers()).map((s) => s.key).sort();

/** The worker log lines of the recovery sweep (pino JSON), summed: how many jobs each kind had queued again. */
function requeuedByLogs() {
  const sum = { webhookEvents: 0, deliveries: 0, submissions: 0 };
  for (const w of workers) {
    for (const line of w.output().split('\n')) {
      if (!line.includes('recovery: lost or stuck jobs queued again')) continue;
      const r = JSON.parse(line);
      for (const k of Object.keys(sum) as (keyof typeof sum)[]) sum[k] += r[k].requeued + r[k].retried;
    }
  }
  return sum;
}

describe('Redis loses all its data while jobs wait and run (FLUSHALL), no process restarted', () => {
  it('webhook events, e-mails, U30 submissions and a render complete exactly once; the recurring jobs come back', async () => {
    const pids = workers.map((w) => w.pid);
    expect(await schedulerKeys()).toContain('relay-outbox');

    // One e-mail job running at the moment of the loss: frozen where it stores its attachment.
    const { tenant: mailTenant, admin: mailAdmin } = await createTeam();
    const customer = await createCustomer(mailTenant, { email: 'einkauf@kunde.example' });
    const runningDraft = await createDraftInvoice(mailTenant, mailAdmin, { customerId: customer.id });
    await sendDraft(mailTenant, mailAdmin, runningDraft.id);
    const running = await db()('deliveries').where({ invoiceId: runningDraft.id }).first();
    const { version } = await db()('invoices').where({ id: runningDraft.id }).first('version');
    const held = await holdArtifactKey({ tenantId: mailTenant.id, invoiceId: runningDraft.id, kind: 'pdf', version });
    let releasedHold = false;
    const releaseHold = async () => {
      if (releasedHold) return;
      releasedHold = true;
      await held.rollback();
    };
    try {
      await waitForBlockedDocumentInsert();
      // Everything else waits in Redis: the workers run, but the queues are paused.
      for (const q of PAUSED) await getQueue(q).pause();

      // Webhook events: stored by the API, handed to Redis by the workers' outbox relay.
      const secret = 'whsec_recovery';
      const { tenant: hookTenant, admin: hookAdmin } = await createTeam();
      const { path } = await install(server.url, hookAdmin.token, 'stripe', { webhookSecret: secret });
      for (let i = 0; i < WEBHOOK_EVENTS; i++) {
        const { body, headers } = stripeDelivery(secret, stripePaymentEvent());
        const res = await deliver(server.url, path, body, headers);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
      }

      // E-mails: invoices sent (the command relays the job after commit).
      for (let i = 0; i < QUEUED_EMAILS; i++) {
        const draft = await createDraftInvoice(mailTenant, mailAdmin, { customerId: customer.id });
        await sendDraft(mailTenant, mailAdmin, draft.id);
      }

      // U30: one live and one test submission (the book's sale is an invoice sent by e-mail too).
      const taxTeam = await smallAustrianBook();
      const taxAdmin = client(server.url, { token: taxTeam.admin.token });
      const credentials = { tid: '123456789012', benid: 'WEBSRV01', pin: 'secret-pin', herstellerid: 'ATU12345678' };
      expect((await taxAdmin.put('/api/settings', { portalCredentials: credentials })).status).toBe(200);
      const submissionIds: string[] = [];
      for (const mode of ['live', 'test']) {
        const res = await taxAdmin.post('/api/reports/ust/submit', { year: 2026, month: 3, mode });
        expect(res.status, JSON.stringify(res.body)).toBe(202);
        submissionIds.push(res.body.submissionId);
      }

      // A render an API request waits for.
      const renderDraft = await createDraftInvoice(mailTenant, mailAdmin, { customerId: customer.id });
      const firstRender = bounded(server.url, 'GET', `/api/invoices/${renderDraft.id}/pdf`, { token: mailAdmin.token, boundMs: 30_000 });

      // All of it is in Redis, and only there.
      // The database is this file's own: every delivery in it is one of ours.
      const allDeliveries: string[] = (await db()('deliveries').select('id')).map((d) => d.id);
      expect(allDeliveries).toHaveLength(QUEUED_EMAILS + 2);
      expect(allDeliveries).toContain(running.id);
      const expected = { [QUEUES.webhooks]: WEBHOOK_EVENTS, [QUEUES.email]: allDeliveries.length, [QUEUES.taxPortal]: 2, [QUEUES.documents]: 1 };
      let seen = {};
      await waitUntil(
        async () => {
          seen = Object.fromEntries(await Promise.all(PAUSED.map(async (q) => [q, await jobsIn(q)])));
          return JSON.stringify(seen) === JSON.stringify(expected);
        },
        'every job to be waiting in Redis',
        30_000,
        100,
      ).catch((err) => {
        throw new Error(`${err.message}: ${JSON.stringify(seen)}, expected ${JSON.stringify(expected)}`);
      });
      expect(await db()('outbox').where({ prefix: process.env.REDIS_PREFIX }).whereNull('enqueuedAt')).toHaveLength(0);

      // Redis loses everything: jobs, the paused flags, the job schedulers.
      const admin = new Redis(redis.url);
      await admin.flushall();
      await admin.quit();
      expect(await jobsIn(QUEUES.email)).toBe(0);

      // The running job goes on (its lock is gone with Redis) and finishes its e-mail.
      await releaseHold();

      // Within the bound, by the recovery loop alone: every webhook event booked, one invoice each…
      await waitUntil(
        async () => (await db()('webhookEvents').where({ tenantId: hookTenant.id, status: 'pending' })).length === 0,
        'the webhook events to be processed',
        BOUND_MS,
        250,
      );
      const events = await db()('webhookEvents').where({ tenantId: hookTenant.id });
      expect(events.map((e) => e.status)).toEqual(Array(WEBHOOK_EVENTS).fill('processed'));
      expect(await db()('invoices').where({ tenantId: hookTenant.id })).toHaveLength(WEBHOOK_EVENTS);

      // …every e-mail sent, the running one included…
      await waitUntil(
        async () => (await db()('deliveries').whereIn('id', allDeliveries).where({ status: 'sent' })).length === allDeliveries.length,
        'the e-mails to be sent',
        BOUND_MS,
        250,
      );

      // …both U30 submissions accepted.
      await waitUntil(
        async () => (await db()('reportSubmissions').whereIn('id', submissionIds).where({ status: 'accepted' })).length === 2,
        'the U30 submissions to be accepted',
        BOUND_MS,
        250,
      );

      // The recurring jobs are declared again (relay-outbox, the sweeps, the purges).
      await waitUntil(async () => (await schedulerKeys()).includes('relay-outbox'), 'the job schedulers to be back', BOUND_MS, 250);

      // Renders need no sweep: the request waiting for the lost job cannot see it finish and
      // answers 503 + Retry-After; the client's retry adds the job again (same id) and gets the PDF.
      const first = await firstRender;
      expect([200, 503]).toContain(first.status);
      let last: unknown;
      const rendered = await waitUntil(
        async () => {
          const r = await bounded(server.url, 'GET', `/api/invoices/${renderDraft.id}/pdf`, { token: mailAdmin.token, boundMs: 30_000 });
          const jobs = await getQueue(QUEUES.documents).getJobs(['wait', 'active', 'completed', 'failed', 'delayed']);
          last = {
            status: r.status,
            body: r.status === 200 ? null : r.body,
            jobs: await Promise.all(jobs.map(async (j) => [j.id, await j.getState(), j.failedReason])),
          };
          return r.status === 200 ? r : null;
        },
        'the render to succeed on retry',
        RENDER_BOUND_MS,
        1000,
      ).catch((err) => {
        throw new Error(
          `${err.message}: ${JSON.stringify(last)}\n${workers
            .map((w) =>
              w
                .output()
                .split('\n')
                .filter((l) => /documents|error/i.test(l))
                .slice(-15)
                .join('\n'),
            )
            .join('\n---\n')}`,
        );
      });
      expect(rendered.headers.get('content-type')).toMatch(/application\/pdf/);
      expect(await db()('documents').where({ invoiceId: renderDraft.id, kind: 'pdf' })).toHaveLength(1);

      // Exactly once, also after a few more recovery runs: nothing is queued twice, nothing sent twice.
      await new Promise((r) => setTimeout(r, 4000));
      for (const id of allDeliveries) expect(messagesFor(id), id).toHaveLength(1);
      expect(fake.uploads.filter((u) => u.uebermittlung === 'P')).toHaveLength(1);
      expect(fake.uploads.filter((u) => u.uebermittlung === 'T')).toHaveLength(1);
      expect(fake.requests.filter((r) => r.soapAction === 'upload')).toHaveLength(2);
      expect(await db()('invoices').where({ tenantId: hookTenant.id })).toHaveLength(WEBHOOK_EVENTS);
      // One sweep at a time across both processes: each lost job was queued again once. The running
      // e-mail is queued again only if its run ended before its claim (BullMQ may stop a job whose
      // lock it cannot renew); if it got as far as the claim, it sent the e-mail itself.
      const requeued = requeuedByLogs();
      expect({ ...requeued, deliveries: 0 }).toEqual({ webhookEvents: WEBHOOK_EVENTS, deliveries: 0, submissions: 2 });
      expect(requeued.deliveries).toBeGreaterThanOrEqual(allDeliveries.length - 1);
      expect(requeued.deliveries).toBeLessThanOrEqual(allDeliveries.length);

      // No process restarted.
      expect(workers.map((w) => [w.pid, w.exitCode, w.signalCode])).toEqual(pids.map((p) => [p, null, null]));
    } finally {
      await releaseHold();
    }
  }, 360_000);

  it('work that may already have happened is not done again: a live U30 upload under way is flagged "outcome unknown", an e-mail mid-transfer fails "outcome unknown"', async () => {
    // The state a job leaves when Redis loses it mid-way: the row claimed, the job gone.
    const taxTeam = await smallAustrianBook();
    const taxAdmin = client(server.url, { token: taxTeam.admin.token });
    const credentials = { tid: '123456789012', benid: 'WEBSRV01', pin: 'secret-pin', herstellerid: 'ATU12345678' };
    expect((await taxAdmin.put('/api/settings', { portalCredentials: credentials })).status).toBe(200);
    const uploadsBefore = fake.requests.filter((r) => r.soapAction === 'upload').length;
    // The book's sale sends an e-mail: let it go out before the queues stop.
    await waitUntil(
      async () => (await db()('deliveries').where({ tenantId: taxTeam.tenant.id, status: 'sent' })).length === 1,
      'the sale e-mail',
      BOUND_MS,
      250,
    );
    for (const q of PAUSED) await getQueue(q).pause();
    try {
      const res = await taxAdmin.post('/api/reports/ust/submit', { year: 2026, month: 3, mode: 'live' });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      const submissionId = res.body.submissionId as string;
      const { tenant, admin } = await createTeam();
      const customer = await createCustomer(tenant, { email: 'einkauf@kunde.example' });
      const draft = await createDraftInvoice(tenant, admin, { customerId: customer.id });
      await sendDraft(tenant, admin, draft.id);
      const delivery = await db()('deliveries').where({ invoiceId: draft.id }).first();
      const messagesBefore = messagesFor(delivery.id).length;

      await db()('reportSubmissions').where({ id: submissionId }).update({ status: 'submitted', attempts: 1 });
      await db()('deliveries').where({ id: delivery.id }).update({ status: 'sending', attempts: 1 });
      const admin2 = new Redis(redis.url);
      await admin2.flushall();
      await admin2.quit();

      const flagged = await waitUntil(
        async () => {
          const row = await db()('reportSubmissions').where({ id: submissionId }).first();
          return row.outcomeUnknown ? row : null;
        },
        'the live submission to be flagged outcome unknown',
        BOUND_MS,
        250,
      );
      expect(flagged.status).toBe('submitted');
      expect(flagged.error).toMatch(/outcome unknown/i);
      const failed = await waitUntil(
        async () => {
          const row = await db()('deliveries').where({ id: delivery.id }).first();
          return row.status === 'failed' ? row : null;
        },
        'the interrupted e-mail to be failed',
        BOUND_MS,
        250,
      );
      expect(failed.error).toMatch(/outcome unknown/i);

      // A few more recovery runs change nothing: no upload, no message, states kept.
      await new Promise((r) => setTimeout(r, 4000));
      expect(fake.requests.filter((r) => r.soapAction === 'upload')).toHaveLength(uploadsBefore);
      expect(messagesFor(delivery.id)).toHaveLength(messagesBefore);
      expect(await db()('reportSubmissions').where({ id: submissionId }).first()).toMatchObject({ status: 'submitted', outcomeUnknown: true });
      expect(await db()('deliveries').where({ id: delivery.id }).first()).toMatchObject({ status: 'failed' });
      expect(await getQueue(QUEUES.taxPortal).getJob(`u30-${submissionId}`)).toBeUndefined();
    } finally {
      for (const q of PAUSED) await getQueue(q).resume();
    }
  }, 180_000);
});
