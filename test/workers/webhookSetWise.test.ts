import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTeam } from '../helpers/factories';
import { createSupplier } from '../helpers/invoiceFactory';
import { normalizedPayment } from '../helpers/normalizedEvents';
import { expectLedgerBalanced } from '../helpers/webhookFactory';
import { db } from '../../shared/db';
import { WEBHOOK_EVENT_TYPES } from '../../shared/domain/outboundWebhooks';
import type { NormalizedEvent } from '../../shared/providers/payments/types';
import type { StoredEventOutcome } from '../../shared/commands/webhooks/bookStoredEvent';
import { bookEvent, bookEventBatch } from '../../workers/jobs/webhooks/eventBatches';

/**
 * Set-wise booking of a batch's plain payments (shared/commands/webhooks/bookPlainPayments.ts)
 * must leave exactly what booking each event alone leaves: the same mixed events (known payers,
 * new payers, redeliveries within and across batches, refunds, a failure, a tenant without a
 * chart yet) are booked for one tenant in batches and for an identical one event by event, and
 * everything both wrote is compared field by field, ids and timestamps aside.
 */

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Ids and timestamps out: uuids in text become <id>, keys that are ids or instants are dropped. */
function normalize(v: unknown): unknown {
  if (typeof v === 'string') return v.replace(UUID, '<id>');
  if (Array.isArray(v)) return v.map(normalize);
  if (v instanceof Date) return '<time>';
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => !(k === 'id' || /Id$/.test(k) || /At$/.test(k) || k === 'xmin'))
        .map(([k, x]) => [k, normalize(x)]),
    );
  }
  return v;
}

const sorted = (rows: unknown[]) => rows.map((r) => JSON.stringify(normalize(r))).sort();

async function tenantWithConnector() {
  const { tenant } = await createTeam();
  const [ci] = await db()('connectorInstallations')
    .insert({ tenantId: tenant.id, provider: 'stripe', tokenHash: randomUUID(), tokenEnc: 'x', secretsEnc: 'x', settings: JSON.stringify({ autoPost: true }) })
    .returning('id');
  await db()('webhookSubscriptions').insert({
    tenantId: tenant.id,
    url: 'https://receiver.example/hook',
    events: [...WEBHOOK_EVENT_TYPES],
    secretEnc: 'unused',
  });
  // Known payers by e-mail: one whose account history the batches build, one with a default expense account.
  await createSupplier(tenant, { name: 'Bekannt Eins', email: 'eins@payer.example' });
  await createSupplier(tenant, { name: 'Bekannt Zwei', email: 'zwei@payer.example' });
  await createSupplier(tenant, { name: 'Bekannt Drei', email: 'drei@payer.example' });
  return { tenantId: tenant.id, connectorId: ci.id as string };
}

async function store(t: { tenantId: string; connectorId: string }, event: NormalizedEvent) {
  const [row] = await db()('webhookEvents')
    .insert({
      tenantId: t.tenantId,
      connectorId: t.connectorId,
      provider: event.provider,
      event: event.eventType,
      status: 'pending',
      externalId: event.eventId,
      moneyExternalId: event.kind === 'payment' || event.kind === 'refund' ? event.externalId : null,
      normalized: JSON.stringify(event),
    })
    .returning('id');
  return { eventRowId: row.id as string, tenantId: t.tenantId };
}

/** Everything the bookings wrote for a tenant, comparable across tenants. */
async function written(tenantId: string) {
  const k = db();
  const q = (sql: string) => k.raw(sql, { t: tenantId }).then((r: { rows: unknown[] }) => r.rows);
  return {
    invoices: sorted(
      await q(`select i.*, s.name as supplier_name, r.external_id as related_external from invoices i
                 left join suppliers s on s.id = i.supplier_id left join invoices r on r.id = i.related_invoice_id
                where i.tenant_id = :t`),
    ),
    items: sorted(await q('select it.*, i.external_id from invoice_items it join invoices i on i.id = it.invoice_id where it.tenant_id = :t')),
    payments: sorted(await q('select p.*, i.external_id from payments p join invoices i on i.id = p.invoice_id where p.tenant_id = :t')),
    entries: sorted(
      await q(`select je.*, i.external_id, ri.external_id as reverses_external,
                      (select json_agg(json_build_object('n', a.number, 'd', jl.debit, 'c', jl.credit) order by jl.debit desc, a.number)
                         from journal_lines jl join ledger_accounts a on a.id = jl.account_id where jl.entry_id = je.id) as lines
                 from journal_entries je left join invoices i on i.id = je.source_id
                 left join journal_entries re on re.id = je.reverses_entry_id left join invoices ri on ri.id = re.source_id
                where je.tenant_id = :t`),
    ),
    usage: sorted(
      await q('select s.name, u.account_number, u.uses from supplier_expense_usage u join suppliers s on s.id = u.supplier_id where u.tenant_id = :t'),
    ),
    suppliers: sorted(await q('select name, email, iban, merchant_ids from suppliers where tenant_id = :t')),
    outbound: sorted(await q('select type, object from outbound_events where tenant_id = :t')),
    deliveries: (await q('select count(*)::int as n from webhook_deliveries where tenant_id = :t')) as unknown[],
    audit: sorted(await q('select action, entity_type, data from audit_log where tenant_id = :t')),
    log: sorted(
      await q(`select we.external_id, we.status, we.error, i.external_id as invoice_external, (we.processed_at is not null) as processed
                 from webhook_events we left join invoices i on i.id = we.invoice_id where we.tenant_id = :t`),
    ),
    // Summed over the slots, which a counter row is spread over at random.
    dayCounts: sorted(
      await q('select type, status, issue_date::text as day, sum(n)::int as n from invoice_day_counts where tenant_id = :t group by type, status, issue_date'),
    ),
    listCounts: sorted(await q('select list, sum(n)::int as n from list_counts where tenant_id = :t group by list')),
  };
}

describe('set-wise booking of plain payments', () => {
  it('books a mixed set of events in batches exactly as one by one', async () => {
    const batched = await tenantWithConnector();
    const alone = await tenantWithConnector();
    const payer = (who: string, amount = '10.00') => normalizedPayment({ amount, counterparty: { name: `${who} GmbH`, email: `${who}@payer.example` } });
    const again = (e: NormalizedEvent): NormalizedEvent => ({ ...e, eventId: `${e.eventId}_again`, eventType: 'invoice.paid' });
    const refund = (of: NormalizedEvent, amount: string): NormalizedEvent =>
      normalizedPayment({
        kind: 'refund',
        eventType: 'charge.refunded',
        amount,
        originalExternalId: of.externalId,
        counterparty: null as never,
      });
    const p1 = payer('eins', '11.00');
    const p2 = payer('zwei', '12.50');
    const p3 = payer('eins', '13.00');
    const p4 = payer('eins', '14.00');
    const p5 = payer('drei', '15.00');
    const p6 = payer('drei', '16.00');
    const p7 = payer('zwei', '17.00');
    const p8 = payer(`neu-${randomUUID().slice(0, 6)}`, '18.00');
    const p9 = payer('eins', '19.00');
    const p10 = payer('zwei', '20.00');
    const p11 = { ...payer('x', '21.00'), counterparty: p8.counterparty };
    const p12 = payer('drei', '22.00');
    const failure = normalizedPayment({ kind: 'failure', eventType: 'invoice.payment_failed' });
    const batches: NormalizedEvent[][] = [
      // No chart yet: the set-wise posting leaves them out, they are posted alone (chart seeded).
      [p1, p2],
      // Known payers (history, none yet), a redelivery across batches, one within, a new payer, a refund, a failure.
      [p3, p4, p5, p6, again(p1), p7, again(p3), p8, refund(p2, '5.00'), failure, p9],
      // A redelivery of the new payer's payment, the new payer now known, a refund of a set-wise payment.
      [p10, again(p8), p11, refund(p4, '14.00'), p12],
    ];

    const outcomes: { batched: StoredEventOutcome[]; alone: StoredEventOutcome[] } = { batched: [], alone: [] };
    for (const events of batches) {
      const refsB: Awaited<ReturnType<typeof store>>[] = [];
      const refsA: Awaited<ReturnType<typeof store>>[] = [];
      for (const e of events) {
        refsB.push(await store(batched, e));
        refsA.push(await store(alone, e));
      }
      outcomes.batched.push(...(await bookEventBatch(refsB)));
      for (const ref of refsA) outcomes.alone.push(await bookEvent(ref));
    }

    expect(outcomes.batched.map((o) => o.status)).toEqual(outcomes.alone.map((o) => o.status));
    expect(normalize(outcomes.batched)).toEqual(normalize(outcomes.alone));
    // The events meant to cover the cases did: duplicates, refunds, a created supplier, history.
    expect(outcomes.alone.map((o) => o.status)).toEqual([
      ...['processed', 'processed'],
      ...['processed', 'processed', 'processed', 'processed', 'duplicate', 'processed', 'duplicate', 'processed', 'processed', 'processed', 'processed'],
      ...['processed', 'duplicate', 'processed', 'processed', 'processed'],
    ]);
    const steps = JSON.stringify(outcomes.alone.map((o) => o.result?.steps));
    expect(steps).toContain('expense account from history');
    expect(steps).toContain('expense account from default');
    expect(steps).toContain('auto-created');

    const [b, a] = [await written(batched.tenantId), await written(alone.tenantId)];
    for (const key of Object.keys(a) as (keyof typeof a)[]) expect(b[key], key).toEqual(a[key]);
    expect(a.invoices).toHaveLength(14);
    expect(a.outbound.length).toBeGreaterThan(30);
    await expectLedgerBalanced();
  });

  it('a batch of plain payments is booked with one statement for the invoices and one for the postings', async () => {
    const t = await tenantWithConnector();
    // The chart first (a posting seeds it), so the batch's postings go set-wise.
    await bookEvent(await store(t, normalizedPayment({ counterparty: { email: 'eins@payer.example' } })));
    const refs = [];
    for (let i = 0; i < 6; i++) refs.push(await store(t, normalizedPayment({ counterparty: { email: i % 2 ? 'eins@payer.example' : 'zwei@payer.example' } })));
    const seen: string[] = [];
    const k = db();
    const listen = (q: { sql: string }) => seen.push(q.sql);
    k.on('query', listen);
    try {
      const out = await bookEventBatch(refs);
      expect(out.map((o) => o.status)).toEqual(Array(6).fill('processed'));
    } finally {
      k.off('query', listen);
    }
    expect(seen.filter((s) => /insert into invoices/i.test(s) || /insert into "invoices"/.test(s))).toHaveLength(1);
    expect(seen.filter((s) => /insert into journal_entries/.test(s))).toHaveLength(1);
    const entries = await db()('journalEntries').where({ tenantId: t.tenantId });
    expect(entries).toHaveLength(7);
  });
});
