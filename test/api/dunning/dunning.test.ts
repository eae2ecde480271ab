import type { Job } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createCustomer, createSentInvoice, recordPayment } from '../../helpers/invoiceFactory';
import { startFakeSmtp, type FakeSmtp } from '../../helpers/fakeSmtp';
import { mailAttachments } from '../../helpers/mailAttachments';
import { pdfText } from '../../helpers/pdf';
import { waitUntil } from '../../helpers/waitUntil';
import { scheduleRecurringJobs, startWorkers, type RunningWorkers } from '../../../workers/worker';
import { getQueue, QUEUES } from '../../../shared/queues';
import { dunningDailyJob, runDunningJob } from '../../../workers/jobs/maintenance/dunning';
import type { RunDunningPayload } from '../../../shared/jobs/catalog';
import { reloadConfig } from '../../../shared/config';
import { db } from '../../../shared/db';
import { addDays, todayVienna } from '../../../shared/domain/dates';
import { advanceClock, now, resetClock } from '../../../shared/clock';

let smtp: FakeSmtp;
let server: Awaited<ReturnType<typeof startTestServer>>;
let workers: RunningWorkers;
let http: TestClient;

beforeAll(async () => {
  smtp = await startFakeSmtp();
  process.env.SMTP_URL = smtp.url;
  process.env.SMTP_FROM = 'Muster GmbH <rechnung@muster.example>';
  reloadConfig();
  server = await startTestServer();
  http = client(server.url);
  workers = await startWorkers({ queues: ['email', 'maintenance'], schedule: false });
});
afterAll(async () => {
  resetClock();
  await workers.close();
  await server.close();
  await smtp.close();
});
afterEach(() => resetClock());

const DAY = 86_400_000;
const items = [{ description: 'Beratung', quantity: '10', unitPrice: '100.00', taxRate: '19' }]; // gross 1190.00
const level = (daysAfterDue: number, fee: string, chargeInterest: boolean) => ({
  daysAfterDue,
  fee,
  chargeInterest,
  emailSubject: 'Mahnung {{level}} zu {{invoiceNumber}}',
  emailBody: 'Bitte zahlen Sie {{totalDue}} EUR ({{noticeNumber}}).\n{{companyName}}',
});
const LEVELS = [level(7, '0.00', false), level(14, '5.00', true), level(21, '10.00', true)];

async function germanTeam(dunning: Record<string, unknown> | null) {
  const team = await createTeam({ country: 'DE', vatId: 'DE999999999', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' });
  if (dunning) {
    const res = await http.put('/api/settings', { dunning }, { token: team.admin.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  const business = await createCustomer(team.tenant, {
    name: 'Erika Muster',
    company: 'Muster Handel GmbH',
    email: 'buchhaltung@muster-handel.example',
    vatId: 'DE123456789',
  });
  return { ...team, business };
}

/** A sent invoice whose due date lies `daysOverdue` days before today (set directly: the test's past). */
async function overdueInvoice(team: { tenant: { id: string }; business: { id: string } }, daysOverdue: number) {
  const inv = await createSentInvoice(team.tenant, null, { customerId: team.business.id, items });
  await db()('invoices')
    .where({ id: inv.id })
    .update({ dueDate: addDays(todayVienna(), -daysOverdue) });
  return inv;
}

const noticesOf = (tenantId: string, invoiceId: string) => db()('dunning_notices').where({ tenantId, invoiceId }).orderBy('level');

describe('settings', () => {
  it('refuses bad dunning settings with clear 400/422 and stores good ones', async () => {
    const { admin } = await createTeam({ country: 'DE', vatId: 'DE999999999' });
    const put = (dunning: unknown) => http.put('/api/settings', { dunning }, { token: admin.token });
    const four = await put({
      enabled: true,
      automatic: false,
      levels: [level(7, '1.00', false), level(14, '1.00', false), level(21, '1.00', false), level(28, '1.00', false)],
    });
    expect(four.status).toBe(400);
    expect((await put({ enabled: true, automatic: false, levels: [level(7, '5', false), level(7, '5', false)] })).body.error).toMatchObject({
      status: 422,
      details: [{ field: 'dunning.levels.1.daysAfterDue' }],
    });
    expect((await put({ enabled: true, automatic: false, levels: [level(7, '5.001', false)] })).status).toBe(400);
    expect((await put({ enabled: true, automatic: false, levels: [{ ...level(7, '5', false), fee: 5 }] })).status).toBe(400);
    expect((await put({ enabled: true, automatic: false, levels: [] })).status).toBe(422);
    const ok = await put({ enabled: true, automatic: true, levels: LEVELS });
    expect(ok.status).toBe(200);
    expect(ok.body.dunning).toEqual({ enabled: true, automatic: true, levels: LEVELS });
    expect((await http.get('/api/settings', { token: admin.token })).body.dunning.levels).toHaveLength(3);
    // Interest needs a law: a tenant moving to Italy keeps its levels only without interest.
    expect((await http.put('/api/settings', { country: 'IT' }, { token: admin.token })).body.error).toMatchObject({
      status: 422,
      details: [{ field: 'dunning.levels.1.chargeInterest' }, { field: 'dunning.levels.2.chargeInterest' }],
    });
  });

  it('customerType is stored, shown and refused when unknown', async () => {
    const { admin } = await createTeam();
    const created = await http.post('/api/customers', { name: 'Max Muster', customerType: 'consumer' }, { token: admin.token });
    expect(created.status).toBe(201);
    expect(created.body.customerType).toBe('consumer');
    expect((await http.post('/api/customers', { name: 'X', customerType: 'verein' }, { token: admin.token })).status).toBe(400);
  });
});

describe('base rates', () => {
  it('lists the published rates per country, oldest first', async () => {
    const { viewer } = await createTeam();
    const de = await http.get('/api/dunning/base-rates?country=DE', { token: viewer.token });
    expect(de.status).toBe(200);
    expect(de.body).toEqual(
      expect.arrayContaining([
        { validFrom: '2025-01-01', rate: '2.27' },
        { validFrom: '2025-07-01', rate: '1.27' },
      ]),
    );
    const at = await http.get('/api/dunning/base-rates?country=AT', { token: viewer.token });
    expect(at.body).toContainEqual({ validFrom: '2025-06-11', rate: '1.53' });
    expect((await http.get('/api/dunning/base-rates?country=FR', { token: viewer.token })).status).toBe(400);
  });
});

describe('the daily run, through a real worker and the SMTP test server', () => {
  it('issues each level once, at its day, e-mails it with its PDF, and never duns a paid invoice', async () => {
    const team = await germanTeam({ enabled: true, automatic: true, levels: LEVELS });
    const a = await overdueInvoice(team, 8);
    const paid = await overdueInvoice(team, 30);
    await recordPayment(team.tenant, null, paid.id, { amount: '1190.00' });
    const tomorrow = await overdueInvoice(team, 6);

    const run = async () => {
      const res = await http.post('/api/dunning/run', {}, { token: team.admin.token });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      return res.body as { jobId: string; day: string };
    };
    const sentNotices = (n: number) =>
      waitUntil(
        async () => {
          const rows = await db()('deliveries').where({ tenantId: team.tenant.id }).whereNotNull('dunningNoticeId').where({ status: 'sent' });
          return rows.length >= n ? rows : null;
        },
        `${n} sent dunning e-mails`,
        120_000,
      ).catch(async (err) => {
        console.log('DELIVERIES', await db()('deliveries').where({ tenantId: team.tenant.id }).select('status', 'error', 'dunningNoticeId', 'attempts'));
        throw err;
      });

    await run();
    await sentNotices(1);
    let notices = await noticesOf(team.tenant.id, a.id);
    expect(notices.map((n) => [n.level, n.fee, n.interest, n.totalDue])).toEqual([[1, '0.00', '0.00', '1190.00']]);
    expect(notices[0].number).toMatch(/^MA-\d{4}-00001$/);

    // A second run on the same day finds nothing due: level 2 waits for its day.
    await run();
    await new Promise((r) => setTimeout(r, 500));
    expect(await noticesOf(team.tenant.id, a.id)).toHaveLength(1);

    // A week later: level 2 for A (15 days overdue), level 1 for the other one; interest 16.11.–… at 10.27 %.
    advanceClock(7 * DAY);
    await run();
    await sentNotices(3);
    notices = await noticesOf(team.tenant.id, a.id);
    // 1190.00 × 10.27 % × 15 / 365 = 5.0224… → 5.02; fee 5.00 + EUR 40 lump sum (§ 288 Abs. 5 BGB)
    expect(notices.map((n) => [n.level, n.fee, n.interest, n.totalDue])).toEqual([
      [1, '0.00', '0.00', '1190.00'],
      [2, '45.00', '5.02', '1240.02'],
    ]);
    expect(await noticesOf(team.tenant.id, tomorrow.id)).toHaveLength(1);

    advanceClock(7 * DAY);
    await run();
    await sentNotices(5);
    notices = await noticesOf(team.tenant.id, a.id);
    // Interest since the day after level 2's: 7 days, 1190.00 × 10.27 % × 7 / 365 = 2.3438… → 2.34; no second lump sum
    expect(notices.at(-1)).toMatchObject({ level: 3, fee: '10.00', interest: '2.34', totalDue: '1252.36' });

    advanceClock(30 * DAY);
    await run();
    await new Promise((r) => setTimeout(r, 500));
    expect(await noticesOf(team.tenant.id, a.id)).toHaveLength(3);
    expect(await noticesOf(team.tenant.id, paid.id)).toHaveLength(0);

    // The API's view of A's notices and the e-mail of level 2 with its PDF.
    const list = await http.get(`/api/invoices/${a.id}/dunning-notices`, { token: team.viewer.token });
    expect(list.status).toBe(200);
    expect(list.body.map((n: { level: number; deliveryStatus: string; totalDue: string }) => [n.level, n.deliveryStatus, n.totalDue])).toEqual([
      [1, 'sent', '1190.00'],
      [2, 'sent', '1240.02'],
      [3, 'sent', '1252.36'],
    ]);
    const second = list.body[1] as { id: string; number: string };
    const delivery = await db()('deliveries').where({ dunningNoticeId: second.id }).first();
    expect(delivery.subject).toBe(`Mahnung 2 zu ${a.number}`);
    const mail = smtp.received.find((m) => m.raw.includes(`delivery-${delivery.id}@`));
    expect(mail, 'the level 2 e-mail').toBeDefined();
    expect(mail!.to).toEqual(['buchhaltung@muster-handel.example']);
    expect(mail!.raw).toContain('1240.02');
    const [attachment] = mailAttachments(mail!.raw);
    expect(attachment.filename).toBe(`${second.number}.pdf`);
    const pdf = await http.get(`/api/dunning-notices/${second.id}/pdf`, { token: team.viewer.token });
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const text = pdfText(pdf.raw).replace(/\s+/g, ' ');
    // The e-mailed PDF and the API's are the same document.
    expect(pdfText(attachment.content).replace(/\s+/g, ' ')).toBe(text);
    expect(text).toContain('2. Mahnung');
    expect(text).toContain(second.number);
    expect(text).toContain(a.number!);
    expect(text).toContain('Pauschale gemäß § 288 Abs. 5 BGB 40,00 €');
    expect(text).toMatch(/Verzugszinsen \d\d\.\d\d\.\d{4}–\d\d\.\d\d\.\d{4}: 15 Tage zu 10,27 % p\. a\. 5,02 € Basiszinssatz 1,27 %/);
    expect(text).toContain('Gesamtbetrag 1.240,02 €');
    expect(text).toContain('§ 288 Abs. 2 BGB');
  }, 300_000);

  it('the daily scheduler fans out one run per tenant and day, however many workers fan out', async () => {
    await scheduleRecurringJobs();
    const schedulers = await getQueue(QUEUES.maintenance).getJobSchedulers();
    expect(schedulers.find((s) => s.key === 'dunning-daily')).toMatchObject({ name: 'dunning-daily', pattern: '0 7 * * *', tz: 'Europe/Vienna' });
    // The other recurring jobs are not this file's business: keep its queue quiet.
    for (const s of schedulers) await getQueue(QUEUES.maintenance).removeJobScheduler(s.key);

    const team = await germanTeam({ enabled: true, automatic: true, levels: LEVELS });
    const manual = await germanTeam({ enabled: true, automatic: false, levels: LEVELS });
    const inv = await overdueInvoice(team, 8);
    await overdueInvoice(manual, 8);
    // Three workers fanning out at the same moment.
    await Promise.all([dunningDailyJob(), dunningDailyJob(), dunningDailyJob()]);
    const day = todayVienna(now());
    const job = await getQueue(QUEUES.maintenance).getJob(`dunning-${team.tenant.id}-${day}`);
    expect(job?.name).toBe('run-dunning');
    expect(await getQueue(QUEUES.maintenance).getJob(`dunning-${manual.tenant.id}-${day}`)).toBeUndefined();
    await waitUntil(async () => (await noticesOf(team.tenant.id, inv.id)).length === 1, 'the fanned-out run', 60_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(await noticesOf(team.tenant.id, inv.id)).toHaveLength(1);
    expect(await db()('dunning_notices').where({ tenantId: manual.tenant.id })).toHaveLength(0);
  }, 120_000);

  it('two runs at once issue one notice', async () => {
    const team = await germanTeam({ enabled: true, automatic: true, levels: LEVELS });
    const inv = await overdueInvoice(team, 8);
    const day = todayVienna(now());
    const job = { data: { tenantId: team.tenant.id, day } } as Job<RunDunningPayload>;
    const results = await Promise.all([runDunningJob(job), runDunningJob(job), runDunningJob(job)]);
    expect(results.map((r) => ('issued' in r ? r.issued : 0)).reduce<number>((a, b) => a + (b ?? 0), 0)).toBe(1);
    expect(await noticesOf(team.tenant.id, inv.id)).toHaveLength(1);
  });
});

describe('review: proposals and issuing by hand', () => {
  it('previews with asOf, issues the due level once, refuses what is not due (422)', async () => {
    const team = await germanTeam({ enabled: true, automatic: false, levels: LEVELS });
    const due = await overdueInvoice(team, 8);
    const soon = await overdueInvoice(team, 2);
    const auth = { token: team.manager.token };
    const today = todayVienna(now());

    const proposals = await http.get('/api/dunning/proposals', auth);
    expect(proposals.status).toBe(200);
    expect(proposals.body).toEqual([
      {
        invoiceId: due.id,
        invoiceNumber: due.number,
        dueDate: addDays(today, -8),
        amountDue: '1190.00',
        level: 1,
        fee: '0.00',
        interest: '0.00',
        totalDue: '1190.00',
      },
    ]);
    const later = await http.get(`/api/dunning/proposals?asOf=${addDays(today, 5)}`, auth);
    expect(later.body.map((p: { invoiceNumber: string; level: number }) => [p.invoiceNumber, p.level])).toEqual([
      [due.number, 1],
      [soon.number, 1],
    ]);
    expect((await http.get('/api/dunning/proposals?asOf=tomorrow', auth)).status).toBe(400);

    // Not automatic: the run is refused, nothing is issued.
    expect((await http.post('/api/dunning/run', {}, { token: team.admin.token })).status).toBe(422);
    const notYet = await http.post(`/api/dunning/proposals/${soon.id}/issue`, {}, auth);
    expect(notYet.status).toBe(422);
    expect(notYet.body.error).toMatchObject({ level: 1, dueOn: addDays(today, 5) });

    const [first, second] = await Promise.all([
      http.post(`/api/dunning/proposals/${due.id}/issue`, {}, auth),
      http.post(`/api/dunning/proposals/${due.id}/issue`, {}, auth),
    ]);
    expect([first.status, second.status].sort()).toEqual([201, 422]);
    const issued = first.status === 201 ? first.body : second.body;
    expect(issued).toMatchObject({ level: 1, fee: '0.00', interest: '0.00', totalDue: '1190.00', deliveryStatus: 'queued' });
    expect(await noticesOf(team.tenant.id, due.id)).toHaveLength(1);
    expect((await http.get('/api/dunning/proposals', auth)).body).toEqual([]);

    // Paid: its dunning stops.
    await recordPayment(team.tenant, null, soon.id, { amount: '1190.00' });
    expect((await http.get(`/api/dunning/proposals?asOf=${addDays(today, 30)}`, auth)).body.map((p: { invoiceId: string }) => p.invoiceId)).toEqual([due.id]);
    const paid = await http.post(`/api/dunning/proposals/${soon.id}/issue`, {}, auth);
    expect(paid.status).toBe(422);
    expect(paid.body.error.message).toContain('paid');

    // Another tenant's invoice and notice are not found; a viewer may not issue.
    const other = await createTeam();
    expect((await http.post(`/api/dunning/proposals/${due.id}/issue`, {}, { token: other.admin.token })).status).toBe(404);
    expect((await http.get(`/api/invoices/${due.id}/dunning-notices`, { token: other.admin.token })).status).toBe(404);
    expect((await http.get(`/api/dunning-notices/${issued.id}/pdf`, { token: other.admin.token })).status).toBe(404);
    expect((await http.post(`/api/dunning/proposals/${due.id}/issue`, {}, { token: team.viewer.token })).status).toBe(403);
  });

  it('Austria: the tenant country decides the law; customerType decides business or consumer', async () => {
    const team = await createTeam({ country: 'AT' });
    const put = await http.put(
      '/api/settings',
      { dunning: { enabled: true, automatic: false, levels: [level(7, '5.00', true)] } },
      { token: team.admin.token },
    );
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const atItems = [{ description: 'Beratung', quantity: '10', unitPrice: '100.00', taxRate: '20' }]; // gross 1200.00
    const consumer = await createCustomer(team.tenant, {
      name: 'Franz Huber',
      company: 'Huber (privat)',
      email: 'franz@huber.example',
      customerType: 'consumer',
    });
    const business = await createCustomer(team.tenant, { name: 'Anna Berger', company: 'Berger GmbH', email: 'office@berger.example' });
    const due = addDays(todayVienna(), -10);
    const ids: Record<string, string> = {};
    for (const [name, c] of [
      ['consumer', consumer],
      ['business', business],
    ] as const) {
      const inv = await createSentInvoice(team.tenant, null, { customerId: c.id, items: atItems });
      await db()('invoices').where({ id: inv.id }).update({ dueDate: due });
      ids[inv.id] = name;
    }
    const proposals = await http.get('/api/dunning/proposals', { token: team.manager.token });
    const byType = Object.fromEntries(proposals.body.map((p: { invoiceId: string }) => [ids[p.invoiceId], p]));
    // Consumer: 4 % (§ 1000 ABGB), 10 days: 1200 × 4 % × 10 / 365 = 1.3150… → 1.32; no lump sum
    expect(byType.consumer).toMatchObject({ level: 1, fee: '5.00', interest: '1.32', totalDue: '1206.32' });
    // Business: OeNB 1.53 + 9.2 = 10.73 % (§ 456 UGB): 3.5276… → 3.53; EUR 40 (§ 458 UGB)
    expect(byType.business).toMatchObject({ level: 1, fee: '45.00', interest: '3.53', totalDue: '1248.53' });
  });

  it('refuses issuing while dunning is off', async () => {
    const team = await germanTeam(null);
    const inv = await overdueInvoice(team, 30);
    expect((await http.get('/api/dunning/proposals', { token: team.manager.token })).body).toEqual([]);
    const res = await http.post(`/api/dunning/proposals/${inv.id}/issue`, {}, { token: team.manager.token });
    expect(res.status).toBe(422);
    expect(res.body.error.message).toContain('not enabled');
  });
});
