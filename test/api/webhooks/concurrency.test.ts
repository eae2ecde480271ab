import { expect, it } from 'vitest';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { bankDelivery, bankEvent, deliver, install, stripeDelivery, stripePaymentEvent, waitForLogRows, withWebhookServer } from '../../helpers/webhookFactory';
import { db } from '../../../shared/db';

const env = withWebhookServer();

const SECRET = 'whsec_test_concurrency_0123456789';

it('100 concurrent deliveries of one event: one invoice, one supplier, one journal entry, 99 duplicate log rows', async () => {
  const { tenant, admin } = await createTeam();
  const { path } = await install(env.server.url, admin.token, 'stripe', { webhookSecret: SECRET });
  await client(env.server.url, { token: admin.token }).put('/api/connectors/stripe/settings', { autoPost: true });
  const { body, headers } = stripeDelivery(SECRET, stripePaymentEvent({ amount: 4200 }));

  const responses = await Promise.all(Array.from({ length: 100 }, () => deliver(env.server.url, path, body, headers)));
  expect(responses.map((r) => r.status)).toEqual(Array(100).fill(200));

  const rows = await waitForLogRows(tenant.id, 'stripe', 100, 60_000);
  const statuses = rows.map((r) => r.status);
  expect(statuses.filter((s) => s === 'processed')).toHaveLength(1);
  expect(statuses.filter((s) => s === 'duplicate')).toHaveLength(99);
  const invoices = await db()('invoices').where({ tenantId: tenant.id });
  expect(invoices).toHaveLength(1);
  expect(invoices[0].totalGross).toBe('42.00');
  expect(await db()('payments').where({ tenantId: tenant.id })).toHaveLength(1);
  expect(await db()('suppliers').where({ tenantId: tenant.id })).toHaveLength(1);
  expect(await db()('journalEntries').where({ tenantId: tenant.id })).toHaveLength(1);
  expect(await db()('journalLines').where({ tenantId: tenant.id })).toHaveLength(2);
  expect(new Set(rows.map((r) => r.invoiceId))).toEqual(new Set([invoices[0].id]));
}, 120_000);

it('concurrent events of one new counterparty create one supplier', async () => {
  const { tenant, admin } = await createTeam();
  const { path } = await install(env.server.url, admin.token, 'bank', { webhookSecret: SECRET });
  const counterparty = { name: 'Neue Lieferant GmbH', iban: 'AT611904300234573201', merchantId: 'M-77' };
  const deliveries = Array.from({ length: 10 }, () => bankDelivery(SECRET, bankEvent({ counterparty })));
  const res = await Promise.all(deliveries.map((d) => deliver(env.server.url, path, d.body, d.headers)));
  expect(res.map((r) => r.status)).toEqual(Array(10).fill(200));
  const rows = await waitForLogRows(tenant.id, 'bank', 10, 30_000);
  expect(rows.every((r) => r.status === 'processed')).toBe(true);
  const suppliers = await db()('suppliers').where({ tenantId: tenant.id });
  expect(suppliers).toHaveLength(1);
  expect(suppliers[0]).toMatchObject({ name: 'Neue Lieferant GmbH', iban: 'AT611904300234573201', merchantIds: { bank: 'M-77' } });
  expect(await db()('invoices').where({ tenantId: tenant.id, supplierId: suppliers[0].id })).toHaveLength(10);
}, 60_000);
