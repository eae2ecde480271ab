import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server';
import { client } from '../helpers/http';
import { createTeam } from '../helpers/factories';
import { startWorkers, type RunningWorkers } from '../../workers/worker';
import { db } from '../../shared/db';

let server: Awaited<ReturnType<typeof startTestServer>>;
let workers: RunningWorkers;

beforeAll(async () => {
  server = await startTestServer();
  workers = await startWorkers({ queues: ['maintenance'], schedule: false });
});
afterAll(async () => {
  await workers.close();
  await server.close();
});

it('an API request enqueues a job and a real worker completes it (7-year customer purge)', async () => {
  const { tenant, admin } = await createTeam();
  const other = await createTeam();
  const eightYearsAgo = new Date(Date.now() - 8 * 365.25 * 86400_000);
  const oneYearAgo = new Date(Date.now() - 365 * 86400_000);
  const [old] = await db()('customers').insert({ tenantId: tenant.id, name: 'Alt GmbH', phone: '+43 1 234', deletedAt: eightYearsAgo }).returning('*');
  const [recent] = await db()('customers').insert({ tenantId: tenant.id, name: 'Neu GmbH', deletedAt: oneYearAgo }).returning('*');
  const [othersOld] = await db()('customers').insert({ tenantId: other.tenant.id, name: 'Fremd', deletedAt: eightYearsAgo }).returning('*');
  // An invoice of the purged customer keeps the customer's data as a snapshot.
  const [inv] = await db()('invoices').insert({ tenantId: tenant.id, type: 'rechnung', customerId: old.id, issueDate: '2018-01-05' }).returning('*');

  const http = client(server.url, { token: admin.token });
  const res = await http.post('/api/maintenance/purge-customers');
  expect(res.status).toBe(202);
  expect(res.body).toMatchObject({ status: 'queued', name: 'purge-deleted-customers' });

  let state = '';
  for (let i = 0; i < 100 && state !== 'completed'; i++) {
    const s = await http.get(`/api/maintenance/jobs/${res.body.jobId}`);
    state = s.body.status;
    if (state === 'completed') expect(s.body.result).toEqual({ purged: 1 });
    else await new Promise((r) => setTimeout(r, 100));
  }
  expect(state).toBe('completed');

  expect(await db()('customers').where({ id: old.id }).first()).toBeUndefined();
  expect(await db()('customers').where({ id: recent.id }).first()).toBeDefined();
  // Tenant-scoped: another tenant's old customer is untouched by this tenant's purge.
  expect(await db()('customers').where({ id: othersOld.id }).first()).toBeDefined();
  const invoice = await db()('invoices').where({ id: inv.id }).first();
  expect(invoice.customerId).toBeNull();
  // The snapshot finalization takes, phone included.
  expect(invoice.customerSnapshot).toEqual({
    id: old.id,
    name: 'Alt GmbH',
    company: null,
    email: null,
    phone: '+43 1 234',
    address: null,
    vatId: null,
    country: null,
  });
  const auditRow = await db()('auditLog').where({ tenantId: tenant.id, action: 'customer.purged', entityId: old.id }).first();
  expect(auditRow).toBeDefined();

  // Another tenant cannot read this tenant's job.
  const foreign = await client(server.url, { token: other.admin.token }).get(`/api/maintenance/jobs/${res.body.jobId}`);
  expect(foreign.status).toBe(404);
});
