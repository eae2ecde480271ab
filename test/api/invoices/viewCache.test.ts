import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../../helpers/server';
import { createTeam } from '../../helpers/factories';
import { cancelInvoice, createDraftInvoice, createSentInvoice, defaultItems, sendDraft } from '../../helpers/invoiceFactory';
import { db } from '../../../shared/db';
import { invoiceViewCache } from '../../../shared/metrics';
import { loadVersionedInvoiceView } from '../../../shared/queries/invoices';
import { invoiceViews } from '../../../api/routes/invoices/viewCache';
import { reloadConfig } from '../../../shared/config';

/**
 * GET /api/invoices/:id serves JSON serialized earlier while the rows it shows are unchanged
 * (docs/invoice-read-cache.md). Changes here are made with SQL on purpose, as a worker, another
 * API process or psql would make them, so that the database (row versions and the triggers of
 * migration 20261126090000), not our commands, is what must notice them.
 */
const ctx = useTestServer();
let team: Awaited<ReturnType<typeof createTeam>>;
beforeAll(async () => {
  team = await createTeam();
});

const outcomes = async () => {
  const { values } = await invoiceViewCache.get();
  const of = (result: string) => values.find((v) => v.labels.result === result)?.value ?? 0;
  return { hit: of('hit'), stale: of('stale'), miss: of('miss') };
};

/** Reads the invoice twice (the second answer from the cache), changes it with `change`, reads it again. */
async function readChangeRead(id: string, change: () => Promise<unknown>) {
  const path = `/api/invoices/${id}`;
  const http = ctx.http.as(team.viewer.token);
  const before = await http.get(path);
  expect(before.status).toBe(200);
  const counted = await outcomes();
  const again = await http.get(path);
  expect((await outcomes()).hit).toBe(counted.hit + 1);
  expect(again.raw.equals(before.raw)).toBe(true);
  expect(again.headers.get('etag')).toBe(before.headers.get('etag'));
  await change();
  const after = await http.get(path);
  return { before: before.body, after: after.body, status: after.status, etagChanged: after.headers.get('etag') !== before.headers.get('etag') };
}

describe('invoice view cache: what a GET shows follows every write', () => {
  it('serves the same bytes and tag from the cache, with the JSON content type and cache headers', async () => {
    const inv = await createDraftInvoice(team.tenant, team.admin);
    const http = ctx.http.as(team.viewer.token);
    const first = await http.get(`/api/invoices/${inv.id}`);
    const second = await http.get(`/api/invoices/${inv.id}`);
    expect(second.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(second.headers.get('cache-control')).toBe('private, no-cache');
    expect(second.body).toEqual(first.body);
    expect(second.body).toMatchObject({ id: inv.id, items: inv.items, totalGross: inv.totalGross });
    const notModified = await http.get(`/api/invoices/${inv.id}`, { headers: { 'If-None-Match': first.headers.get('etag')! } });
    expect(notModified.status).toBe(304);
  });

  it('the invoice row itself (notes)', async () => {
    const inv = await createDraftInvoice(team.tenant, team.admin);
    const r = await readChangeRead(inv.id, () => db()('invoices').where({ id: inv.id }).update({ notes: 'per SQL' }));
    expect(r.after.notes).toBe('per SQL');
    expect(r.etagChanged).toBe(true);
  });

  it('an item (trigger on invoice_items)', async () => {
    const inv = await createDraftInvoice(team.tenant, team.admin);
    const r = await readChangeRead(inv.id, () => db()('invoiceItems').where({ invoiceId: inv.id, position: 1 }).update({ description: 'Geändert' }));
    expect(r.after.items[0].description).toBe('Geändert');
    const gone = await readChangeRead(inv.id, () => db()('invoiceItems').where({ invoiceId: inv.id, position: 2 }).delete());
    expect(gone.after.items).toHaveLength(inv.items.length - 1);
  });

  it('a payment written by another process (trigger on payments)', async () => {
    const inv = await createSentInvoice(team.tenant, team.admin);
    const r = await readChangeRead(inv.id, () =>
      db()('payments').insert({ tenantId: team.tenant.id, invoiceId: inv.id, amount: '10.00', date: inv.issueDate, method: 'bank_transfer' }),
    );
    expect(r.after.payments).toEqual([expect.objectContaining({ amount: '10.00', method: 'bank_transfer' })]);
    const edited = await readChangeRead(inv.id, () => db()('payments').where({ invoiceId: inv.id }).update({ amount: '12.00' }));
    expect(edited.after.payments[0].amount).toBe('12.00');
  });

  it('an e-mail delivery the worker updates (trigger on deliveries)', async () => {
    const draft = await createDraftInvoice(team.tenant, team.admin);
    const inv = await sendDraft(team.tenant, team.admin, draft.id, { to: 'kunde@example.com' });
    const r = await readChangeRead(inv.id, () =>
      db()('deliveries').where({ invoiceId: inv.id }).update({ status: 'sent', smtpResponse: '250 OK', sentAt: db().fn.now() }),
    );
    expect(r.after.deliveries[0]).toMatchObject({ status: 'sent', smtpResponse: '250 OK' });
  });

  it('the Storno credit note is a column of the invoice (credit_note_id), set by SQL as by cancel', async () => {
    const inv = await createSentInvoice(team.tenant, team.admin);
    const other = await createSentInvoice(team.tenant, team.admin);
    await db()('invoices').where({ id: other.id }).update({ type: 'gutschrift', relatedInvoiceId: inv.id });
    const linked = await readChangeRead(inv.id, () => db()('invoices').where({ id: inv.id }).update({ status: 'storniert', creditNoteId: other.id }));
    expect([linked.before.creditNoteId, linked.after.creditNoteId]).toEqual([null, other.id]);
    expect(linked.after.status).toBe('storniert');
  });

  it('a manual credit note pointing at the invoice changes nothing it shows (served from the cache); cancelling shows the Storno', async () => {
    const inv = await createSentInvoice(team.tenant, team.admin);
    let manual = '';
    const r = await readChangeRead(inv.id, async () => {
      const res = await ctx.http.post(
        '/api/invoices',
        { type: 'gutschrift', relatedInvoiceId: inv.id, customerId: inv.customerId, items: defaultItems() },
        { token: team.admin.token },
      );
      expect(res.status).toBe(201);
      manual = res.body.id;
    });
    expect(r.after.creditNoteId).toBeNull();
    expect(r.etagChanged).toBe(false);
    let storno: string | null = null;
    const cancelled = await readChangeRead(inv.id, async () => {
      ({ creditNoteId: storno } = await cancelInvoice(team.tenant, team.admin, inv.id));
    });
    expect(storno).not.toBe(manual);
    expect(cancelled.after).toMatchObject({ status: 'storniert', creditNoteId: storno });
  });

  it('the related invoice’s number, shown on its credit note', async () => {
    const inv = await createSentInvoice(team.tenant, team.admin);
    const { creditNoteId } = await cancelInvoice(team.tenant, team.admin, inv.id);
    const r = await readChangeRead(creditNoteId!, () => db()('invoices').where({ id: inv.id }).update({ number: 'RE-SQL-1' }));
    expect([r.before.relatedInvoiceNumber, r.after.relatedInvoiceNumber]).toEqual([inv.number, 'RE-SQL-1']);
  });

  it('a draft’s live customer, and the tenant’s country it falls back to', async () => {
    const inv = await createDraftInvoice(team.tenant, team.admin);
    const renamed = await readChangeRead(inv.id, () =>
      db()('customers').where({ id: inv.customerId }).update({ name: 'Neuer Name', country: null, vatId: null }),
    );
    expect(renamed.after.customer).toMatchObject({ name: 'Neuer Name' });
    const country = renamed.after.customer.country as string;
    const other = country === 'DE' ? 'AT' : 'DE';
    try {
      const moved = await readChangeRead(inv.id, () => db()('tenants').where({ id: team.tenant.id }).update({ country: other }));
      expect(moved.after.customer.country).toBe(other);
    } finally {
      await db()('tenants').where({ id: team.tenant.id }).update({ country }); // later tests create invoices at this tenant's rates
    }
  });

  it('a deleted invoice is 404 although its JSON is held; another tenant’s id is 404', async () => {
    const inv = await createDraftInvoice(team.tenant, team.admin);
    const stranger = await createTeam();
    await ctx.http.get(`/api/invoices/${inv.id}`, { token: team.viewer.token });
    expect((await ctx.http.get(`/api/invoices/${inv.id}`, { token: stranger.admin.token })).status).toBe(404);
    const r = await readChangeRead(inv.id, () => db()('invoices').where({ id: inv.id }).update({ deletedAt: db().fn.now() }));
    expect(r.status).toBe(404);
    expect(r.after.error.code).toBe('NOT_FOUND');
  });

  it('a write that changes nothing the view shows keeps serving from the cache', async () => {
    const inv = await createSentInvoice(team.tenant, team.admin);
    const other = await createSentInvoice(team.tenant, team.admin);
    const r = await readChangeRead(inv.id, () => db()('invoices').where({ id: other.id }).update({ notes: 'nur die andere' }));
    expect(r.etagChanged).toBe(false);
  });

  it('INVOICE_VIEW_CACHE_MB=0 holds nothing and serves the same JSON', async () => {
    const inv = await createDraftInvoice(team.tenant, team.admin);
    const held = await ctx.http.get(`/api/invoices/${inv.id}`, { token: team.viewer.token });
    process.env.INVOICE_VIEW_CACHE_MB = '0';
    try {
      reloadConfig();
      invoiceViews.clear();
      const before = await outcomes();
      const plain = await ctx.http.get(`/api/invoices/${inv.id}`, { token: team.viewer.token });
      await ctx.http.get(`/api/invoices/${inv.id}`, { token: team.viewer.token });
      expect(plain.raw.equals(held.raw)).toBe(true);
      expect(plain.headers.get('etag')).toBe(held.headers.get('etag'));
      expect(invoiceViews.size.entries).toBe(0);
      expect((await outcomes()).miss).toBe(before.miss + 2);
    } finally {
      delete process.env.INVOICE_VIEW_CACHE_MB;
      reloadConfig();
    }
  });
});

describe('invoice view version: every table the single read reads is covered', () => {
  it('has the view triggers on each related table; invoices, customers and tenants are versioned by the check itself', async () => {
    const inv = await createDraftInvoice(team.tenant, team.admin);
    const statements: string[] = [];
    const listen = (q: { sql: string }) => statements.push(q.sql);
    db().on('query', listen);
    try {
      await loadVersionedInvoiceView(db(), team.tenant.id, inv.id);
    } finally {
      db().off('query', listen);
    }
    const read = statements.find((sql) => sql.includes('"viewVersion"'))!;
    const tables = new Set([...read.matchAll(/\b(?:from|join)\s+"?(\w+)"?/gi)].map((m) => m[1]));
    // Items, payments and deliveries at least: a match that found none would check nothing.
    expect([...tables]).toEqual(expect.arrayContaining(['invoices', 'tenants', 'customers', 'invoice_items', 'payments', 'deliveries']));
    const { rows } = await db().raw<{ rows: { table: string; name: string }[] }>(
      "select c.relname as table, t.tgname as name from pg_trigger t join pg_class c on c.oid = t.tgrelid where t.tgname like '%view_touch%'",
    );
    for (const table of tables) {
      if (['invoices', 'customers', 'tenants'].includes(table)) continue; // their xmin is in the version
      const names = rows
        .filter((r) => r.table === table)
        .map((r) => r.name)
        .sort();
      expect(names, `triggers on ${table}`).toEqual([`${table}_view_touch_delete`, `${table}_view_touch_insert`, `${table}_view_touch_update`]);
    }
    // creditNoteId is a column of the invoice (migration 20261126100000): no credit note row is read
    // through the invoice, so no trigger on invoices is needed (or left behind).
    expect(rows.filter((r) => r.table === 'invoices').map((r) => r.name)).toEqual([]);
  });
});
