import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { createTeam } from '../helpers/factories';
import { createCustomer } from '../helpers/invoiceFactory';
import { startTestServer } from '../helpers/server';
import { client, type TestClient } from '../helpers/http';
import { exitOf } from '../helpers/processes';
import { db } from '../../shared/db';
import { resetClock, setClock } from '../../shared/clock';
import { getQueue, QUEUES } from '../../shared/queues';
import { sigkillTree, waitUntil } from './faults';
import { startWorkerProcess } from './workerKill';

/**
 * Recurring invoices are billed once per period whatever the worker fleet does
 * (docs/recurring-invoices.md): 14 months of runs with a worker SIGKILLed in the middle of one,
 * and two runs at once on two worker processes. Real worker processes; the API in this process
 * with its clock moved month by month (POST /run carries the API's day to the worker).
 */
let server: Awaited<ReturnType<typeof startTestServer>>;
const started: ChildProcess[] = [];

beforeAll(async () => {
  server = await startTestServer();
});
afterEach(async () => {
  resetClock();
  for (const c of started.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGTERM');
      await exitOf(c);
    }
  }
});
afterAll(async () => {
  await server?.close();
});

const worker = async () => {
  const w = await startWorkerProcess();
  started.push(w);
  return w;
};
const at = (day: string) => setClock(() => new Date(`${day}T09:00:00Z`).getTime());
const monthStart = (m: number) => `${2027 + Math.floor(m / 12)}-${String((m % 12) + 1).padStart(2, '0')}-01`;

async function setup() {
  const { tenant, admin } = await createTeam();
  const customer = await createCustomer(tenant);
  const http = client(server.url, { token: admin.token });
  const res = await http.post('/api/recurring-invoices', {
    customerId: customer.id,
    items: [{ description: 'Hosting', quantity: 1, unitPrice: '50.00', taxRate: '20' }],
    interval: 'monthly',
    startDate: '2027-01-01',
    autoSend: false,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { tenant, http, templateId: res.body.id as string };
}

const periodCount = async (templateId: string) =>
  Number((await db()('recurringInvoicePeriods').where({ recurringInvoiceId: templateId }).count({ n: '*' }))[0].n);

async function run(http: TestClient, day: string): Promise<string> {
  at(day);
  const res = await http.post('/api/recurring-invoices/run', {});
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.jobId;
}

const completed = (jobId: string) =>
  waitUntil(async () => (await getQueue(QUEUES.maintenance).getJobState(jobId)) === 'completed', `run ${jobId} to complete`, 60_000, 100);

/** Invoices of the tenant and their service periods, checked against the template's periods. */
async function invoicesOf(tenantId: string) {
  return db()('invoices').where({ tenantId }).whereNull('deletedAt').orderBy('serviceDate').select('id', 'serviceDate', 'serviceEndDate', 'status');
}

describe('recurring invoices and the worker fleet', () => {
  it('14 monthly runs with a worker SIGKILLed in the middle of one: exactly 14 invoices, one per period', async () => {
    const { tenant, http, templateId } = await setup();
    await worker();
    for (let m = 0; m < 14; m++) {
      if (m === 6) {
        // Hold the template row: the worker's billing transaction waits on it, mid-run, with the
        // period row and the invoice not yet written. Then the worker dies.
        const held = await db().transaction();
        await held('recurringInvoices').where({ id: templateId }).forUpdate();
        try {
          await run(http, monthStart(m));
          await waitUntil(
            async () => {
              const { rows } = await db().raw(
                `select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike '%recurring_invoices%'`,
              );
              return rows.length > 0;
            },
            'the worker to wait on the template lock',
            30_000,
            50,
          );
          await sigkillTree(started[0]);
        } finally {
          await held.rollback();
        }
        expect(await periodCount(templateId)).toBe(6);
        await worker(); // takes the stalled run over and bills month 7
      } else {
        await run(http, monthStart(m));
      }
      await waitUntil(async () => (await periodCount(templateId)) === m + 1, `period ${m + 1} billed`, 60_000, 100);
    }
    // Once more for good measure: nothing new is due.
    await completed(await run(http, '2028-02-15'));

    const invoices = await invoicesOf(tenant.id);
    expect(invoices).toHaveLength(14);
    expect(invoices.map((i) => i.serviceDate)).toEqual(Array.from({ length: 14 }, (_, m) => monthStart(m)));
    expect(invoices[1]).toMatchObject({ serviceDate: '2027-02-01', serviceEndDate: '2027-02-28', status: 'entwurf' });
    expect(await periodCount(templateId)).toBe(14);
  }, 300_000);

  it('two runs at once on two workers bill each period once (a past startDate caught up)', async () => {
    const { tenant, http, templateId } = await setup();
    await Promise.all([worker(), worker()]);
    at('2027-12-15');
    const [a, b] = await Promise.all([http.post('/api/recurring-invoices/run', {}), http.post('/api/recurring-invoices/run', {})]);
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(a.body.jobId).not.toBe(b.body.jobId);
    await Promise.all([completed(a.body.jobId), completed(b.body.jobId)]);
    expect(await periodCount(templateId)).toBe(12);
    const invoices = await invoicesOf(tenant.id);
    expect(invoices).toHaveLength(12);
    expect(new Set(invoices.map((i) => i.serviceDate)).size).toBe(12);
  }, 300_000);
});
