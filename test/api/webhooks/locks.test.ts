import { expect, it } from 'vitest';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { deliver, install, stripeDelivery, stripePaymentEvent, waitForLogRows, withWebhookServer } from '../../helpers/webhookFactory';
import { db } from '../../../shared/db';
import { moneyLockKey, moneyLockKeySql } from '../../../shared/locks';

const env = withWebhookServer();

const SECRET = 'whsec_test_locks_0123456789abcdef';

/** Backends waiting for an advisory lock in the job's first statement (the one that reads the log row). */
async function firstStatementsWaiting(): Promise<number> {
  const r = await db().raw(
    `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and wait_event = 'advisory' and query like '%lockedMoneyKey%'`,
  );
  return r.rows[0].n;
}

it('the job takes the money lock in its first statement: the SQL key is moneyLockKey, and a held lock holds the job back', async () => {
  const { tenant, admin } = await createTeam();
  const { path } = await install(env.server.url, admin.token, 'stripe', { webhookSecret: SECRET });
  await client(env.server.url, { token: admin.token }).put('/api/connectors/stripe/settings', { autoPost: true });

  // A first event tells us how a Stripe payment's money id is stored, and that the two key forms agree.
  const first = stripeDelivery(SECRET, stripePaymentEvent({ amount: 1000 }));
  expect((await deliver(env.server.url, path, first.body, first.headers)).status).toBe(200);
  const [row] = await waitForLogRows(tenant.id, 'stripe', 1);
  const [{ key }] = (await db().raw(`select ${moneyLockKeySql} as key from webhook_events we where we.id = ?`, [row.id])).rows;
  expect(key).toBe(moneyLockKey(tenant.id, 'stripe', row.moneyExternalId));

  // Hold the lock of a second payment's money movement on another connection, then deliver it.
  const invoiceId = `in_locktest_${Date.now()}`;
  const holder = await db().transaction();
  try {
    await holder.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [moneyLockKey(tenant.id, 'stripe', invoiceId)]);
    const second = stripeDelivery(SECRET, stripePaymentEvent({ invoiceId, amount: 2000 }));
    expect((await deliver(env.server.url, path, second.body, second.headers)).status).toBe(200);
    const stored = await db()('webhookEvents').where({ tenantId: tenant.id, moneyExternalId: invoiceId }).first();
    expect(stored?.status).toBe('pending');

    // The job waits on the lock in its first statement, its log row still pending and nothing booked.
    const deadline = Date.now() + 20_000;
    while ((await firstStatementsWaiting()) === 0) {
      if (Date.now() > deadline) throw new Error('the job never waited for the money lock');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await db()('webhookEvents').where({ id: stored!.id }).first()).status).toBe('pending');
    expect(await db()('invoices').where({ tenantId: tenant.id, externalId: invoiceId })).toHaveLength(0);
  } finally {
    await holder.commit();
  }

  const rows = await waitForLogRows(tenant.id, 'stripe', 2);
  expect(rows.map((r) => r.status)).toEqual(['processed', 'processed']);
  expect(await db()('invoices').where({ tenantId: tenant.id, externalId: invoiceId })).toHaveLength(1);
  expect(await db()('journalEntries').where({ tenantId: tenant.id })).toHaveLength(2);
}, 60_000);
