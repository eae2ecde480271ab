import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { createTeam } from '../helpers/factories';
import { createCustomer, createDraftInvoice, sendDraft } from '../helpers/invoiceFactory';
import { db } from '../../shared/db';
import { getQueue, QUEUES } from '../../shared/queues';
import { exitOf } from '../helpers/processes';
import { sigkillTree, waitUntil } from './faults';
import { holdArtifactKey, startWorkerProcess, waitForBlockedDocumentInsert } from './workerKill';
import { startSlowSmtp, type SlowSmtp } from './slowSmtp';

/**
 * E-mail is at-most-once (docs/documents-and-email.md): a worker SIGKILLed mid-job must never
 * lead to two messages. Killed before the SMTP transfer → the retry sends it, once. Killed while
 * the SMTP server holds the message but has not answered → the retry marks the delivery failed
 * with "outcome unknown" and sends nothing.
 */
let smtp: SlowSmtp;
const started: ChildProcess[] = [];

beforeAll(async () => {
  smtp = await startSlowSmtp();
});
// Each test ends with no worker left running, so the next test's jobs meet only its own workers.
afterEach(async () => {
  for (const c of started.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGTERM');
      await exitOf(c);
    }
  }
});
afterAll(async () => {
  await smtp?.close();
});

const worker = async () => {
  const w = await startWorkerProcess({ SMTP_URL: smtp.url, SMTP_FROM: 'Resilienz GmbH <rechnung@resilienz.example>' });
  started.push(w);
  return w;
};

async function queuedDelivery() {
  const { tenant, admin } = await createTeam();
  const customer = await createCustomer(tenant, { email: 'einkauf@kunde.example' });
  const draft = await createDraftInvoice(tenant, admin, { customerId: customer.id });
  // Finalizes the invoice and relays the e-mail job (no worker runs yet, so it waits in the queue).
  await sendDraft(tenant, admin, draft.id);
  const delivery = await db()('deliveries').where({ invoiceId: draft.id }).first();
  const { version } = await db()('invoices').where({ id: draft.id }).first('version');
  return { tenant, invoiceId: draft.id, delivery, version, jobId: `email-${delivery.id}` };
}

const messagesFor = (deliveryId: string) => smtp.received.filter((m) => m.raw.includes(`delivery-${deliveryId}@`));

async function finalDelivery(id: string) {
  return waitUntil(
    async () => {
      const d = await db()('deliveries').where({ id }).first();
      return ['sent', 'failed'].includes(d.status) ? d : null;
    },
    `delivery ${id} to settle`,
    40_000,
    200,
  );
}

describe('worker SIGKILLed during an e-mail job', () => {
  it('killed while rendering the attachment (before the SMTP claim): the retry sends it exactly once', async () => {
    const { tenant, invoiceId, delivery, version, jobId } = await queuedDelivery();
    expect(delivery.status).toBe('queued');
    const held = await holdArtifactKey({ tenantId: tenant.id, invoiceId, kind: 'pdf', version });
    try {
      const first = await worker();
      await waitForBlockedDocumentInsert();
      expect(await (await getQueue(QUEUES.email).getJob(jobId))!.getState()).toBe('active');
      await sigkillTree(first);
    } finally {
      await held.rollback();
    }
    expect((await db()('deliveries').where({ id: delivery.id }).first()).status).toBe('queued');
    expect(messagesFor(delivery.id)).toHaveLength(0);

    await worker();
    const row = await finalDelivery(delivery.id);
    expect(row.status).toBe('sent');
    expect(messagesFor(delivery.id)).toHaveLength(1);
    expect(await db()('documents').where({ invoiceId, kind: 'pdf', version })).toHaveLength(1);
  }, 90_000);

  it('killed while the SMTP server holds the message unanswered: failed "outcome unknown", never a second message', async () => {
    const { delivery, jobId } = await queuedDelivery();
    smtp.hold();
    try {
      const first = await worker();
      await waitUntil(async () => messagesFor(delivery.id).length === 1 && smtp.heldCount() > 0, 'the SMTP server to hold the message', 30_000, 50);
      expect((await db()('deliveries').where({ id: delivery.id }).first()).status).toBe('sending');
      await sigkillTree(first);
    } finally {
      smtp.releaseAll();
    }

    await worker();
    const row = await finalDelivery(delivery.id);
    expect(row.status).toBe('failed');
    expect(row.error).toMatch(/outcome unknown/i);
    const job = await waitUntil(
      async () => {
        // State first, then the job: a copy fetched before the state check could predate completion.
        const state = await getQueue(QUEUES.email).getJobState(jobId);
        return state === 'completed' ? getQueue(QUEUES.email).getJob(jobId) : null;
      },
      'the e-mail job to complete',
      20_000,
      200,
    );
    expect(job.returnvalue).toMatchObject({ status: 'failed', reason: 'unknown-outcome' });
    // The SMTP server got the message once; nothing more arrives.
    expect(messagesFor(delivery.id)).toHaveLength(1);
  }, 90_000);
});
