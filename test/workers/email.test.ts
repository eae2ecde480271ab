import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server';
import { client } from '../helpers/http';
import { createTeam } from '../helpers/factories';
import { createCustomer, createDraftInvoice } from '../helpers/invoiceFactory';
import { startFakeSmtp, type FakeSmtp } from '../helpers/fakeSmtp';
import { startWorkers, type RunningWorkers } from '../../workers/worker';
import { reloadConfig } from '../../shared/config';
import { db } from '../../shared/db';
import { sendInvoiceEmailJob } from '../../workers/jobs/email/sendInvoiceEmail';

let smtp: FakeSmtp;
let server: Awaited<ReturnType<typeof startTestServer>>;
let workers: RunningWorkers;

beforeAll(async () => {
  smtp = await startFakeSmtp();
  process.env.SMTP_URL = smtp.url;
  process.env.SMTP_FROM = 'Alpen Software <rechnung@alpen.example>';
  reloadConfig();
  server = await startTestServer();
  workers = await startWorkers({ queues: ['email', 'maintenance'], schedule: false });
});
afterAll(async () => {
  await workers.close();
  await server.close();
  await smtp.close();
});

async function waitForDelivery(id: string, statuses: string[]) {
  for (let i = 0; i < 200; i++) {
    const row = await db()('deliveries').where({ id }).first();
    if (statuses.includes(row.status)) return row;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`delivery ${id} never reached ${statuses}`);
}

async function draftFor() {
  const team = await createTeam({ name: 'Alpen Software GmbH' });
  const customer = await createCustomer(team.tenant, { name: 'Größl KG', email: 'office@groessl.example' });
  const draft = await createDraftInvoice(team.tenant, team.admin, { customerId: customer.id });
  return { ...team, customer, draft };
}

describe('invoice e-mail delivery', () => {
  it('send → 202 queued; the worker e-mails the PDF once and records the SMTP answer on the invoice', async () => {
    const { member, draft } = await draftFor();
    const before = smtp.received.length;
    const res = await client(server.url, { token: member.token }).post(`/api/invoices/${draft.id}/send`, {
      to: 'einkauf@groessl.example',
      subject: 'Ihre Rechnung',
      message: 'Grüß Gott, anbei die Rechnung.',
    });
    expect(res.status).toBe(202);
    expect(res.body.delivery.status).toBe('queued');
    const row = await waitForDelivery(res.body.delivery.id, ['sent', 'failed']);
    expect(row.status).toBe('sent');
    expect(row.smtpResponse).toMatch(/^250/);
    expect(row.attempts).toBe(1);
    // The delivery status is visible on the invoice.
    const view = await client(server.url, { token: member.token }).get(`/api/invoices/${draft.id}`);
    expect(view.body.deliveries).toEqual([
      expect.objectContaining({ id: row.id, to: 'einkauf@groessl.example', status: 'sent', attempts: 1, smtpResponse: expect.stringMatching(/^250/) }),
    ]);

    const mails = smtp.received.slice(before);
    expect(mails).toHaveLength(1);
    const mail = mails[0];
    expect(mail.to).toEqual(['einkauf@groessl.example']);
    expect(mail.from).toBe('rechnung@alpen.example');
    expect(mail.raw).toMatch(/^Subject: Ihre Rechnung/m);
    expect(mail.raw).toMatch(new RegExp(`^Message-ID: <delivery-${row.id}@alpen\\.example>`, 'mi'));
    expect(mail.raw).toMatch(new RegExp(`^X-Invoice-Id: ${draft.id}`, 'mi'));
    expect(mail.raw).toMatch(/Content-Type: application\/pdf; name=RE-\d{4}-\d{5}\.pdf/);
    expect(mail.raw).toMatch(/Content-Disposition: attachment; filename=RE-\d{4}-\d{5}\.pdf/);
    expect(mail.raw).toContain('JVBERi0'); // base64 of "%PDF-"
  });

  it('a temporary SMTP failure (451) is retried with backoff and the mail arrives exactly once', async () => {
    const { admin, draft } = await draftFor();
    smtp.failNext(1, 451);
    const before = smtp.received.length;
    const res = await client(server.url, { token: admin.token }).post(`/api/invoices/${draft.id}/send`, {});
    expect(res.status).toBe(202);
    const row = await waitForDelivery(res.body.delivery.id, ['sent', 'failed']);
    expect(row.status).toBe('sent');
    expect(row.attempts).toBe(2);
    expect(smtp.received.slice(before).filter((m) => m.raw.includes(`delivery-${row.id}@`))).toHaveLength(1);
  });

  it('a permanent SMTP refusal (550) fails the delivery at once with the SMTP answer', async () => {
    const { admin, draft } = await draftFor();
    smtp.failNext(1, 550, 'No such user here');
    const res = await client(server.url, { token: admin.token }).post(`/api/invoices/${draft.id}/send`, {});
    const row = await waitForDelivery(res.body.delivery.id, ['sent', 'failed']);
    expect(row.status).toBe('failed');
    expect(row.attempts).toBe(1);
    expect(row.error).toMatch(/550.*No such user/);
  });

  it('never sends twice: a sent delivery is skipped; one left "sending" by a dead worker is failed, not resent', async () => {
    const { admin, draft } = await draftFor();
    const res = await client(server.url, { token: admin.token }).post(`/api/invoices/${draft.id}/send`, {});
    const row = await waitForDelivery(res.body.delivery.id, ['sent']);
    const count = smtp.received.length;
    const job = { data: { deliveryId: row.id, tenantId: row.tenantId }, attemptsMade: 1, opts: { attempts: 10 } } as never;
    expect(await sendInvoiceEmailJob(job)).toMatchObject({ skipped: true });

    await db()('deliveries').where({ id: row.id }).update({ status: 'sending' });
    expect(await sendInvoiceEmailJob(job)).toMatchObject({ status: 'failed', reason: 'unknown-outcome' });
    const after = await db()('deliveries').where({ id: row.id }).first();
    expect(after.status).toBe('failed');
    expect(after.error).toMatch(/outcome unknown/);
    expect(smtp.received.length).toBe(count);
  });
});
