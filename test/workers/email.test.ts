import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer } from '../helpers/server';
import { client } from '../helpers/http';
import { createTeam } from '../helpers/factories';
import { createCustomer, createDraftInvoice, createEInvoiceCustomer, createSentInvoice } from '../helpers/invoiceFactory';
import { startFakeSmtp, type FakeSmtp } from '../helpers/fakeSmtp';
import { mailAttachments } from '../helpers/mailAttachments';
import { startWorkers, type RunningWorkers } from '../../workers/worker';
import { reloadConfig } from '../../shared/config';
import { db } from '../../shared/db';
import { sendInvoiceEmailJob } from '../../workers/jobs/email/sendInvoiceEmail';
import { runInTransaction } from '../../shared/outbox';
import { updateInvoice } from '../../shared/commands/updateInvoice';
import type { InvoiceInput } from '../../shared/domain/invoiceInput';
import { pdfText } from '../helpers/pdf';
import { detachFile, detachList, xmpOf } from '../formats/pdf/pdfTools';
import { validateXml } from '../helpers/xmllint';
import { needsOfficialFiles } from '../helpers/officialFiles';
import { CII_XSD, CII_XSD_FILE } from '../formats/cii/fixtures';

/**
 * Seams for the failure and race tests, keyed by invoice id so the worker's other jobs are not
 * affected: `afterLoad` runs once right after the invoice's version and content were read (a
 * concurrent edit lands between that read and the caching of the artifact); `renderFailure` makes rendering throw.
 */
const hooks = vi.hoisted(() => ({
  afterLoad: new Map<string, () => Promise<void>>(),
  renderFailure: new Map<string, Error>(),
}));
vi.mock('../../shared/queries/invoices', async (importOriginal) => {
  const mod = await importOriginal<typeof import('../../shared/queries/invoices')>();
  return {
    ...mod,
    loadDocumentRow: async (...args: Parameters<typeof mod.loadDocumentRow>) => {
      const input = await mod.loadDocumentRow(...args);
      const hook = hooks.afterLoad.get(args[2]);
      if (hook) {
        hooks.afterLoad.delete(args[2]);
        await hook();
      }
      return input;
    },
  };
});
vi.mock('../../shared/documents/renderDocument', async (importOriginal) => {
  const mod = await importOriginal<typeof import('../../shared/documents/renderDocument')>();
  return {
    ...mod,
    renderDocument: async (...args: Parameters<typeof mod.renderDocument>) => {
      const failure = hooks.renderFailure.get(args[1].invoice.id);
      if (failure) throw failure;
      return mod.renderDocument(...args);
    },
  };
});

const official = needsOfficialFiles([CII_XSD_FILE]);

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

/** Up to 60 s: the first job of the file starts a sandboxed child (tsx, fonts), slow on a loaded CI machine. */
async function waitForDelivery(id: string, statuses: string[]) {
  for (let i = 0; i < 600; i++) {
    const row = await db()('deliveries').where({ id }).first();
    if (statuses.includes(row.status)) return row;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`delivery ${id} never reached ${statuses}`);
}

/** A queued delivery row without a queued job, for calling the job directly. */
async function queuedDelivery(tenantId: string, invoiceId: string) {
  const [row] = await db()('deliveries')
    .insert({ tenantId, invoiceId, channel: 'email', to: 'einkauf@groessl.example', subject: 'Rechnung', message: 'Anbei.', status: 'queued' })
    .returning('*');
  return row;
}

const jobFor = (row: { id: string; tenantId: string }, attemptsMade = 0) =>
  ({ data: { deliveryId: row.id, tenantId: row.tenantId }, attemptsMade, opts: { attempts: 10 } }) as never;

async function optInToZugferd(token: string) {
  const res = await client(server.url, { token }).put('/api/settings', { zugferdByDefault: true });
  expect(res.status).toBe(200);
  expect(res.body.zugferdByDefault).toBe(true);
}

async function draftFor() {
  const team = await createTeam({ name: 'Alpen Software GmbH' });
  const customer = await createCustomer(team.tenant, { name: 'Größl KG', email: 'office@groessl.example' });
  const draft = await createDraftInvoice(team.tenant, team.admin, { customerId: customer.id });
  return { ...team, customer, draft };
}

/** A draft that can become a valid e-invoice: customer with address and VAT ID. */
async function draftForEInvoice(tenantOverrides: Record<string, unknown> = {}, invoiceOverrides: Partial<InvoiceInput> = {}) {
  const team = await createTeam(tenantOverrides);
  const customer = await createEInvoiceCustomer(team.tenant);
  const draft = await createDraftInvoice(team.tenant, team.admin, { customerId: customer.id, ...invoiceOverrides });
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

describe('the database fails right after the SMTP server accepted the message', () => {
  it('the retry records the accepted mail and does not send it again', async () => {
    const { tenant, admin } = await createTeam({ name: 'Alpen Software GmbH' });
    const inv = await createSentInvoice(tenant, admin, { customerId: (await createCustomer(tenant, { email: 'k@kunde.example' })).id });
    await waitForDelivery((await db()('deliveries').where({ invoiceId: inv.id }).first()).id, ['sent']);
    // A delivery no worker has seen, and a fault in the database for exactly its 'sent' write
    // (what a lock held past statement_timeout or a dropped connection does to that statement).
    const [delivery] = await db()('deliveries')
      .insert({ tenantId: tenant.id, invoiceId: inv.id, channel: 'email', to: 'k@kunde.example', subject: 'Rechnung', message: 'Hallo', status: 'queued' })
      .returning('*');
    await db().raw(`
      create table if not exists test_fail_sent (delivery_id uuid primary key);
      create or replace function test_fail_sent() returns trigger language plpgsql as $$
      begin
        if new.status = 'sent' and exists (select 1 from test_fail_sent where delivery_id = new.id) then
          raise exception 'injected fault: the database is gone';
        end if;
        return new;
      end $$;
      drop trigger if exists test_fail_sent on deliveries;
      create trigger test_fail_sent before update on deliveries for each row execute function test_fail_sent();`);
    await db()('testFailSent').insert({ deliveryId: delivery.id });
    const job = {
      data: { deliveryId: delivery.id, tenantId: tenant.id },
      attemptsMade: 0,
      opts: { attempts: 10 },
      async updateData(data: unknown) {
        job.data = data as typeof job.data;
      },
    };
    const before = smtp.received.length;
    try {
      await expect(sendInvoiceEmailJob(job as never)).rejects.toThrow(/injected fault/);
      expect(smtp.received.length).toBe(before + 1);
      expect(await db()('deliveries').where({ id: delivery.id }).first()).toMatchObject({ status: 'sending' });
      expect(job.data).toMatchObject({ accepted: { messageId: expect.stringContaining(delivery.id) } });
    } finally {
      await db()('testFailSent').where({ deliveryId: delivery.id }).delete();
      await db().raw('drop trigger if exists test_fail_sent on deliveries');
    }
    // BullMQ's retry, with the data the failed attempt kept: it records, it does not send.
    job.attemptsMade = 1;
    expect(await sendInvoiceEmailJob(job as never)).toMatchObject({ status: 'sent', recordedLate: true });
    expect(smtp.received.length).toBe(before + 1);
    const row = await db()('deliveries').where({ id: delivery.id }).first();
    expect(row).toMatchObject({ status: 'sent', messageId: expect.stringContaining(delivery.id) });
    expect(row.smtpResponse).toMatch(/^250/);
    expect(row.sentAt).not.toBeNull();
  });
});

describe('invoice e-mail with ZUGFeRD and rendering failures', () => {
  it.skipIf(!official)('tenant opted into ZUGFeRD: the mail carries the ZUGFeRD PDF (PDF/A-3 with factur-x.xml) instead of the plain PDF', async () => {
    const { admin, draft } = await draftForEInvoice({ name: 'Alpen Software GmbH', address: 'Mariahilfer Straße 1\n1060 Wien' });
    await optInToZugferd(admin.token);
    const before = smtp.received.length;
    const res = await client(server.url, { token: admin.token }).post(`/api/invoices/${draft.id}/send`, {});
    expect(res.status).toBe(202);
    const row = await waitForDelivery(res.body.delivery.id, ['sent', 'failed']);
    expect(row.status).toBe('sent');
    expect(row.error).toBeNull();
    const number = res.body.invoice.number as string;

    const mails = smtp.received.slice(before).filter((m) => m.raw.includes(`delivery-${row.id}@`));
    expect(mails).toHaveLength(1);
    const attachments = mailAttachments(mails[0].raw);
    // One file: a ZUGFeRD invoice is a readable PDF, so it replaces the plain one.
    expect(attachments.map((a) => [a.filename, a.contentType])).toEqual([[`${number}.zugferd.pdf`, 'application/pdf']]);
    const pdf = attachments[0].content;
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(xmpOf(pdf)).toMatch(/pdfaid:part(>|=")3/);
    expect(detachList(pdf)).toEqual(['factur-x.xml']);
    const xml = detachFile(pdf, 'factur-x.xml').toString('utf8');
    expect(xml).toContain('CrossIndustryInvoice');
    expect(xml).toContain(number);
    const { valid, errors } = validateXml(xml, CII_XSD);
    expect(valid, errors).toBe(true);
    expect(pdfText(pdf)).toContain(number);
  });

  it('ZUGFeRD impossible (seller without VAT ID): the plain PDF is sent and the reason noted on the delivery', async () => {
    // A small-amount invoice (EUR 120 gross): lawful without the seller's UID (§ 11 Abs. 6 UStG),
    // so send finalizes it, but EN 16931 still wants the seller's VAT id (BR-S-02).
    const small = [{ description: 'Beratung', quantity: 1, unitPrice: '100.00', taxRate: '20' }];
    const { admin, draft } = await draftForEInvoice({ vatId: null, taxNumber: null }, { items: small });
    await optInToZugferd(admin.token);
    const before = smtp.received.length;
    const res = await client(server.url, { token: admin.token }).post(`/api/invoices/${draft.id}/send`, {});
    const row = await waitForDelivery(res.body.delivery.id, ['sent', 'failed']);
    expect(row.status).toBe('sent');
    expect(row.attempts).toBe(1);
    expect(row.error).toMatch(/^Sent as plain PDF: ZUGFeRD not possible: .*\[BR-S-02\]/);
    const number = res.body.invoice.number as string;
    const [mail] = smtp.received.slice(before).filter((m) => m.raw.includes(`delivery-${row.id}@`));
    const attachments = mailAttachments(mail.raw);
    expect(attachments.map((a) => a.filename)).toEqual([`${number}.pdf`]);
    expect(detachList(attachments[0].content)).toEqual([]);
    expect(pdfText(attachments[0].content)).toContain(number);
  });

  it('a permanent rendering error (invoice gone) fails the delivery at once with the reason; nothing is sent', async () => {
    const { tenant, draft } = await draftFor();
    await db()('invoices').where({ id: draft.id }).update({ deletedAt: db().fn.now() });
    const delivery = await queuedDelivery(tenant.id, draft.id);
    const count = smtp.received.length;
    await expect(sendInvoiceEmailJob(jobFor(delivery))).rejects.toMatchObject({ name: 'UnrecoverableError' });
    const row = await db()('deliveries').where({ id: delivery.id }).first();
    expect(row.status).toBe('failed');
    expect(row.attempts).toBe(0);
    expect(row.error).toMatch(/^The invoice could not be rendered for sending: .*not found/i);
    expect(smtp.received.length).toBe(count);
  });

  it('a temporary rendering error keeps the delivery queued for the retry; the last attempt fails it with the reason', async () => {
    const { tenant, draft } = await draftFor();
    const delivery = await queuedDelivery(tenant.id, draft.id);
    const count = smtp.received.length;
    hooks.renderFailure.set(draft.id, new Error('font cache unavailable'));
    try {
      await expect(sendInvoiceEmailJob(jobFor(delivery, 0))).rejects.toThrow('font cache unavailable');
      let row = await db()('deliveries').where({ id: delivery.id }).first();
      expect(row.status).toBe('queued');
      expect(row.error).toMatch(/font cache unavailable/);

      await expect(sendInvoiceEmailJob(jobFor(delivery, 9))).rejects.toMatchObject({ name: 'UnrecoverableError' });
      row = await db()('deliveries').where({ id: delivery.id }).first();
      expect(row.status).toBe('failed');
      expect(row.error).toBe('The invoice could not be rendered for sending: font cache unavailable');
    } finally {
      hooks.renderFailure.delete(draft.id);
    }
    expect(smtp.received.length).toBe(count);
  });

  it('an edit between reading the content and the version cannot cache old content under the new version', async () => {
    const { tenant, admin, customer } = await draftFor();
    const inv = await createSentInvoice(tenant, admin, { customerId: customer.id, notes: 'Erste Fassung der Notiz' });
    // The delivery queued by the send above renders and caches the PDF of the current version.
    const [first] = await db()('deliveries').where({ invoiceId: inv.id });
    await waitForDelivery(first.id, ['sent']);
    const { version } = await db()('invoices').where({ id: inv.id }).first('version');

    const delivery = await queuedDelivery(tenant.id, inv.id);
    const before = smtp.received.length;
    hooks.afterLoad.set(inv.id, () =>
      runInTransaction(async (trx) => {
        // A PUT on the finalized invoice: notes may change and bump the version.
        await updateInvoice({ trx, actor: { tenantId: tenant.id, userId: admin.id, role: 'admin' } }, inv.id, { notes: 'Zweite Fassung der Notiz' } as never);
      }),
    );
    await sendInvoiceEmailJob(jobFor(delivery));
    expect(hooks.afterLoad.has(inv.id)).toBe(false); // the edit did land mid-job
    expect((await db()('invoices').where({ id: inv.id }).first('version')).version).toBe(version + 1);

    // Every cached artifact shows the content of the version it is stored under.
    const docs = await db()('documents').where({ invoiceId: inv.id, kind: 'pdf' });
    expect(docs.length).toBeGreaterThan(0);
    for (const doc of docs) {
      const text = pdfText(doc.content);
      expect(text, `artifact v${doc.version}`).toContain(doc.version === version ? 'Erste Fassung' : 'Zweite Fassung');
    }
    // The mail carries the snapshot the job read: the content before the edit.
    const [mail] = smtp.received.slice(before).filter((m) => m.raw.includes(`delivery-${delivery.id}@`));
    expect(pdfText(mailAttachments(mail.raw)[0].content)).toContain('Erste Fassung');

    // The next request for the new version renders the new content.
    const next = await queuedDelivery(tenant.id, inv.id);
    await sendInvoiceEmailJob(jobFor(next));
    const latest = await db()('documents')
      .where({ invoiceId: inv.id, kind: 'pdf', version: version + 1 })
      .first();
    expect(pdfText(latest.content)).toContain('Zweite Fassung');
  });
});
