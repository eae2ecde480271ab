import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam, createUser } from '../../helpers/factories';
import { createCustomer } from '../../helpers/invoiceFactory';
import { startFakeSmtp, type FakeSmtp } from '../../helpers/fakeSmtp';
import { waitUntil } from '../../helpers/waitUntil';
import { reloadConfig } from '../../../shared/config';
import { resetClock, setClock } from '../../../shared/clock';
import { db } from '../../../shared/db';
import { scheduleRecurringJobs, startWorkers, type RunningWorkers } from '../../../workers/worker';
import { getQueue, QUEUES } from '../../../shared/queues';

/**
 * Recurring invoices through the API with a real worker in this process (maintenance and email
 * queues, not sandboxed) and an SMTP test server. The service clock (shared/clock.ts) is moved to
 * stand on a given day; POST /run carries that day to the worker. docs/recurring-invoices.md.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;
let workers: RunningWorkers;
let smtp: FakeSmtp;
let team: Awaited<ReturnType<typeof createTeam>>;
let asAdmin: TestClient;

const items = [{ description: 'Wartungsvertrag', quantity: 1, unitPrice: '100.00', taxRate: '20' }];
const at = (day: string) => setClock(() => new Date(`${day}T10:00:00Z`).getTime());

beforeAll(async () => {
  smtp = await startFakeSmtp();
  process.env.SMTP_URL = smtp.url;
  process.env.SMTP_FROM = 'Abo GmbH <rechnung@abo.example>';
  const cfg = reloadConfig();
  server = await startTestServer();
  workers = await startWorkers({ queues: ['maintenance', 'email'], schedule: false, sandbox: false, cfg });
  team = await createTeam();
  asAdmin = client(server.url, { token: team.admin.token });
});
afterEach(() => resetClock());
afterAll(async () => {
  await workers?.close();
  await server?.close();
  await smtp?.close();
});

async function template(body: Record<string, unknown>) {
  const customer = await createCustomer(team.tenant, { email: 'abo@kunde.example' });
  const res = await asAdmin.post('/api/recurring-invoices', { customerId: customer.id, items, interval: 'monthly', autoSend: false, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; customerId: string; status: string; nextDate: string | null; lastError: string | null };
}

/** POST /run on the given day and wait for its job to finish (failed counts as finished). */
async function runOn(day: string) {
  at(day);
  const res = await asAdmin.post('/api/recurring-invoices/run', {});
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect(res.body.asOf).toBe(day);
  await waitUntil(
    async () => {
      const state = await getQueue(QUEUES.maintenance).getJobState(res.body.jobId);
      // A failed run retries with backoff: its first failure is what a test looks at.
      return state === 'completed' || state === 'failed' || (state === 'delayed' ? 'delayed' : null);
    },
    `run ${res.body.jobId}`,
    30_000,
    100,
  );
}

const billed = async (id: string) => (await asAdmin.get(`/api/recurring-invoices/${id}/invoices?limit=100`)).body.data as Array<Record<string, any>>;

describe('recurring invoice templates', () => {
  it('creates, reads, lists, replaces and deletes a template', async () => {
    const t = await template({ startDate: '2026-01-31', dayOfMonth: 31, notes: 'Abo' });
    expect(t).toMatchObject({ status: 'active', nextDate: '2026-01-31', lastError: null });
    expect((await asAdmin.get(`/api/recurring-invoices/${t.id}`)).body.notes).toBe('Abo');
    const list = await asAdmin.get('/api/recurring-invoices');
    expect(list.body.data.map((x: { id: string }) => x.id)).toContain(t.id);
    expect(list.body.pagination).toMatchObject({ page: 1, limit: 25 });
    const put = await asAdmin.put(`/api/recurring-invoices/${t.id}`, {
      customerId: t.customerId,
      items,
      interval: 'quarterly',
      startDate: '2026-02-01',
      autoSend: true,
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ interval: 'quarterly', nextDate: '2026-02-01', autoSend: true, dayOfMonth: null });
    expect((await asAdmin.delete(`/api/recurring-invoices/${t.id}`)).status).toBe(204);
    expect((await asAdmin.get(`/api/recurring-invoices/${t.id}`)).status).toBe(404);
  });

  it('previews the next 12 dates, the 31st as the last day of shorter months', async () => {
    const t = await template({ startDate: '2026-01-31', dayOfMonth: 31 });
    const res = await asAdmin.get(`/api/recurring-invoices/${t.id}/preview`);
    expect(res.status).toBe(200);
    expect(res.body.map((p: { date: string }) => p.date)).toEqual([
      '2026-01-31',
      '2026-02-28',
      '2026-03-31',
      '2026-04-30',
      '2026-05-31',
      '2026-06-30',
      '2026-07-31',
      '2026-08-31',
      '2026-09-30',
      '2026-10-31',
      '2026-11-30',
      '2026-12-31',
    ]);
    expect(res.body[1]).toEqual({ date: '2026-02-28', periodStart: '2026-02-28', periodEnd: '2026-03-30' });
  });

  it('refuses a deleted customer, bad items and a bad schedule with 400 naming the field', async () => {
    const gone = await createCustomer(team.tenant);
    expect((await asAdmin.delete(`/api/customers/${gone.id}`)).status).toBe(204);
    const deleted = await asAdmin.post('/api/recurring-invoices', {
      customerId: gone.id,
      items,
      interval: 'monthly',
      startDate: '2026-01-01',
      autoSend: false,
    });
    expect(deleted.status).toBe(400);
    expect(deleted.body.error.details).toEqual([{ field: 'customerId', message: 'customer has been deleted and cannot get new invoices' }]);
    const customer = await createCustomer(team.tenant);
    const base = { customerId: customer.id, items, interval: 'monthly', startDate: '2026-01-01', autoSend: false };
    const rate = await asAdmin.post('/api/recurring-invoices', { ...base, items: [{ ...items[0], taxRate: '19' }] });
    expect(rate.status).toBe(400);
    expect(rate.body.error.details[0].field).toBe('items.0.taxRate');
    for (const bad of [{ interval: 'weekly' }, { dayOfMonth: 32 }, { items: [] }, { startDate: '2026-02-30x' }, { extra: 1 }]) {
      expect((await asAdmin.post('/api/recurring-invoices', { ...base, ...bad })).status, JSON.stringify(bad)).toBe(400);
    }
    const end = await asAdmin.post('/api/recurring-invoices', { ...base, endDate: '2025-12-31' });
    expect(end.status).toBe(400);
    expect(end.body.error.details[0].field).toBe('endDate');
  });

  it('lets viewers read, members create, managers change and only admins run', async () => {
    const t = await template({ startDate: '2026-01-01' });
    const viewer = client(server.url, { token: (await createUser(team.tenant, 'viewer')).token });
    const member = client(server.url, { token: (await createUser(team.tenant, 'member')).token });
    const manager = client(server.url, { token: (await createUser(team.tenant, 'manager')).token });
    expect((await viewer.get(`/api/recurring-invoices/${t.id}`)).status).toBe(200);
    expect(
      (await viewer.post('/api/recurring-invoices', { customerId: t.customerId, items, interval: 'monthly', startDate: '2026-01-01', autoSend: false })).status,
    ).toBe(403);
    expect(
      (await member.post('/api/recurring-invoices', { customerId: t.customerId, items, interval: 'monthly', startDate: '2026-01-01', autoSend: false })).status,
    ).toBe(201);
    expect((await member.post(`/api/recurring-invoices/${t.id}/pause`, {})).status).toBe(403);
    expect((await manager.post(`/api/recurring-invoices/${t.id}/pause`, {})).status).toBe(200);
    expect((await manager.post('/api/recurring-invoices/run', {})).status).toBe(403);
  });
});

describe('the run', () => {
  it('is declared daily at 06:00 Vienna time with the other recurring jobs (so Bull Board lists it)', async () => {
    await scheduleRecurringJobs();
    const schedulers = await getQueue(QUEUES.maintenance).getJobSchedulers();
    expect(schedulers.find((s) => s.key === 'run-recurring-invoices-daily')).toMatchObject({
      name: 'run-recurring-invoices',
      pattern: '0 6 * * *',
      tz: 'Europe/Vienna',
    });
  });

  it('catches up every period due since a past startDate, once each, with the period as service period', async () => {
    const t = await template({ startDate: '2026-01-15', dayOfMonth: 1 });
    await runOn('2026-04-20');
    const periods = await billed(t.id);
    expect(periods.map((p) => [p.periodStart, p.periodEnd])).toEqual([
      ['2026-04-01', '2026-04-30'],
      ['2026-03-01', '2026-03-31'],
      ['2026-02-01', '2026-02-28'],
    ]);
    const invoice = await asAdmin.get(`/api/invoices/${periods[0].invoiceId}`);
    expect(invoice.body).toMatchObject({ status: 'entwurf', serviceDate: '2026-04-01', serviceEndDate: '2026-04-30', totalGross: '120.00' });
    await runOn('2026-04-21');
    expect(await billed(t.id)).toHaveLength(3);
    expect((await asAdmin.get(`/api/recurring-invoices/${t.id}`)).body).toMatchObject({ nextDate: '2026-05-01', lastError: null });
    // A new calendar goes on after the last billed period (1–30 April): the 15th of May, not of April.
    const put = await asAdmin.put(`/api/recurring-invoices/${t.id}`, {
      customerId: t.customerId,
      items,
      interval: 'monthly',
      startDate: '2026-01-15',
      autoSend: false,
    });
    expect(put.body).toMatchObject({ nextDate: '2026-05-15', dayOfMonth: null });
    expect(await billed(t.id)).toHaveLength(3);
  });

  it('bills nothing while paused and goes on after resume with the next period from that day', async () => {
    const t = await template({ startDate: '2026-01-01' });
    await runOn('2026-01-01');
    at('2026-01-10');
    expect((await asAdmin.post(`/api/recurring-invoices/${t.id}/pause`, {})).body.status).toBe('paused');
    expect((await asAdmin.get(`/api/recurring-invoices/${t.id}/preview`)).body).toEqual([]);
    await runOn('2026-03-15');
    expect(await billed(t.id)).toHaveLength(1);
    at('2026-03-15');
    const resumed = await asAdmin.post(`/api/recurring-invoices/${t.id}/resume`, {});
    expect(resumed.body).toMatchObject({ status: 'active', nextDate: '2026-04-01' });
    await runOn('2026-04-01');
    expect((await billed(t.id)).map((p) => p.periodStart)).toEqual(['2026-04-01', '2026-01-01']);
  });

  it('stops at endDate, the last period ending on it, and then shows ended', async () => {
    const t = await template({ startDate: '2026-01-01', endDate: '2026-03-10', interval: 'monthly' });
    await runOn('2026-12-31');
    expect((await billed(t.id)).map((p) => [p.periodStart, p.periodEnd])).toEqual([
      ['2026-03-01', '2026-03-10'],
      ['2026-02-01', '2026-02-28'],
      ['2026-01-01', '2026-01-31'],
    ]);
    expect((await asAdmin.get(`/api/recurring-invoices/${t.id}`)).body).toMatchObject({ status: 'ended', nextDate: null });
    expect((await asAdmin.post(`/api/recurring-invoices/${t.id}/pause`, {})).status).toBe(422);
  });

  it('with autoSend finalizes each invoice and e-mails it through the delivery pipeline', async () => {
    const t = await template({ startDate: '2026-05-01', autoSend: true, paymentTermDays: 10 });
    await runOn('2026-06-01');
    const periods = await billed(t.id);
    expect(periods).toHaveLength(2);
    for (const p of periods) {
      expect(p.status).toBe('offen');
      expect(p.number).toMatch(/\S/);
      const delivery = await waitUntil(
        async () => {
          const d = await db()('deliveries').where({ invoiceId: p.invoiceId }).first();
          return d?.status === 'sent' ? d : null;
        },
        `delivery of ${p.number}`,
        60_000,
        200,
      );
      expect(delivery.to).toBe('abo@kunde.example');
      expect(smtp.received.some((m) => m.raw.includes(`delivery-${delivery.id}@`))).toBe(true);
    }
  });

  it('records a failure on the template (lastError) and bills the period on a later run once the cause is gone', async () => {
    const customer = await createCustomer(team.tenant, { email: 'weg@kunde.example' });
    const created = await asAdmin.post('/api/recurring-invoices', {
      customerId: customer.id,
      items,
      interval: 'monthly',
      startDate: '2026-01-01',
      autoSend: false,
    });
    // The customer is deleted after the template was made: the run cannot bill it.
    expect((await asAdmin.delete(`/api/customers/${customer.id}`)).status).toBe(204);
    await runOn('2026-01-01');
    const failed = (await asAdmin.get(`/api/recurring-invoices/${created.body.id}`)).body;
    expect(failed.lastError).toMatch(/customerId: customer has been deleted/);
    expect(failed.nextDate).toBe('2026-01-01');
    expect(await billed(created.body.id)).toEqual([]);
    // The cause removed (another customer), the next run bills the period and clears lastError.
    const other = await createCustomer(team.tenant);
    await asAdmin.put(`/api/recurring-invoices/${created.body.id}`, {
      customerId: other.id,
      items,
      interval: 'monthly',
      startDate: '2026-01-01',
      autoSend: false,
    });
    await runOn('2026-01-02');
    expect(await billed(created.body.id)).toHaveLength(1);
    expect((await asAdmin.get(`/api/recurring-invoices/${created.body.id}`)).body.lastError).toBeNull();
  });
});
