import { afterEach, describe, expect, it, vi } from 'vitest';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { deliver, install, stripeDelivery, stripePaymentEvent, tenantRowCounts, waitForLogRows, withWebhookServer } from '../../helpers/webhookFactory';
import { db } from '../../../shared/db';

const env = withWebhookServer();

const SECRET = 'whsec_test_connectors_0123456789';
const api = (token: string) => client(env.server.url, { token });

describe('install, reinstall, uninstall', () => {
  it('admin installs; the URL carries a high-entropy token; GET shows settings and URL but never the secret', async () => {
    const { tenant, admin, manager } = await createTeam();
    const res = await api(admin.token).post('/api/connectors/stripe/install', { webhookSecret: SECRET });
    expect(res.status).toBe(201);
    expect(res.body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(res.body.webhookUrl).toMatch(new RegExp(`/api/payment-import/stripe/${res.body.token}$`));

    const got = await api(manager.token).get('/api/connectors/stripe');
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      provider: 'stripe',
      active: true,
      webhookUrl: res.body.webhookUrl,
      settings: { autoPost: false, defaultSupplierId: null, expenseAccount: null, clearingAccount: null },
    });
    expect(JSON.stringify(got.body)).not.toContain(SECRET);
    const row = await db()('connectorInstallations').where({ tenantId: tenant.id }).first();
    expect(row.tokenHash).not.toContain(res.body.token);
    expect(row.tokenEnc).not.toContain(res.body.token);
    expect(row.secretsEnc).not.toContain(SECRET);
  });

  it('roles: install and uninstall are admin only; GET and settings manager and above; unknown slug → 404', async () => {
    const { admin, manager, member, viewer } = await createTeam();
    expect((await api(manager.token).post('/api/connectors/stripe/install', { webhookSecret: SECRET })).status).toBe(403);
    expect((await api(admin.token).post('/api/connectors/unknown/install', { webhookSecret: SECRET })).status).toBe(404);
    await install(env.server.url, admin.token, 'stripe', { webhookSecret: SECRET });
    expect((await api(member.token).get('/api/connectors/stripe')).status).toBe(403);
    expect((await api(viewer.token).put('/api/connectors/stripe/settings', { autoPost: true })).status).toBe(403);
    expect((await api(manager.token).put('/api/connectors/stripe/settings', { autoPost: true })).status).toBe(200);
    expect((await api(manager.token).delete('/api/connectors/stripe')).status).toBe(403);
    expect((await api(admin.token).get('/api/connectors/unknown')).status).toBe(404);
    expect((await api(admin.token).get('/api/connectors/bank')).status).toBe(404); // not installed
    expect((await client(env.server.url).get('/api/connectors/stripe')).status).toBe(401);
  });

  it('secrets are checked per provider', async () => {
    const { admin } = await createTeam();
    const missing = await api(admin.token).post('/api/connectors/stripe/install', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.details).toEqual([{ field: 'webhookSecret', message: 'is required for stripe' }]);
    // Blank is missing too (it was stored as "", and every real delivery then failed as invalid_signature).
    for (const [slug, body, field] of [
      ['bank', { webhookSecret: '   ' }, 'webhookSecret'],
      ['paypal', { webhookId: ' \t' }, 'webhookId'],
      ['mollie', { apiKey: '  ' }, 'apiKey'],
    ] as const) {
      const blank = await api(admin.token).post(`/api/connectors/${slug}/install`, body);
      expect(blank.status, slug).toBe(400);
      expect(blank.body.error.details).toEqual([{ field, message: `is required for ${slug}` }]);
    }
    const wrongField = await api(admin.token).post('/api/connectors/paypal/install', { webhookId: 'WH-1', apiKey: 'x' });
    expect(wrongField.status).toBe(400);
    expect(wrongField.body.error.details).toEqual([{ field: 'apiKey', message: 'is not used by paypal' }]);
    const unknown = await api(admin.token).post('/api/connectors/bank/install', { webhookSecret: 's', extra: 1 });
    expect(unknown.status).toBe(400);
    expect((await api(admin.token).post('/api/connectors/mollie/install', { apiKey: 'test_x', signingSecret: 'sig' })).status).toBe(201);
  });

  it('reinstall rotates the token (old URL → 404) and keeps the settings; uninstall makes the URL 404', async () => {
    const { tenant, admin } = await createTeam();
    const first = await install(env.server.url, admin.token, 'stripe', { webhookSecret: SECRET });
    await api(admin.token).put('/api/connectors/stripe/settings', { autoPost: true });
    const second = await install(env.server.url, admin.token, 'stripe', { webhookSecret: SECRET });
    expect(second.token).not.toBe(first.token);
    const d = stripeDelivery(SECRET, stripePaymentEvent());
    expect((await deliver(env.server.url, first.path, d.body, d.headers)).status).toBe(404);
    expect((await deliver(env.server.url, second.path, d.body, d.headers)).status).toBe(200);
    await waitForLogRows(tenant.id, 'stripe', 1);
    expect((await api(admin.token).get('/api/connectors/stripe')).body.settings.autoPost).toBe(true);

    expect((await api(admin.token).delete('/api/connectors/stripe')).status).toBe(204);
    const d2 = stripeDelivery(SECRET, stripePaymentEvent());
    expect((await deliver(env.server.url, second.path, d2.body, d2.headers)).status).toBe(404);
    expect((await api(admin.token).get('/api/connectors/stripe')).status).toBe(404);
    expect((await api(admin.token).delete('/api/connectors/stripe')).status).toBe(404);
    // The log survives the uninstall; a re-install carries the previous settings over.
    expect((await api(admin.token).get('/api/connectors/stripe/webhook-logs')).body).toHaveLength(1);
    await install(env.server.url, admin.token, 'stripe', { webhookSecret: SECRET });
    expect((await api(admin.token).get('/api/connectors/stripe')).body.settings.autoPost).toBe(true);
  });

  it('the first install seeds the chart of accounts by country: AT → EKR, DE → SKR03', async () => {
    const at = await createTeam({ country: 'AT' });
    const de = await createTeam({ country: 'DE' });
    await install(env.server.url, at.admin.token, 'stripe', { webhookSecret: SECRET });
    await install(env.server.url, de.admin.token, 'paypal', { webhookId: 'WH-x' });
    await install(env.server.url, de.admin.token, 'bank', { webhookSecret: SECRET });
    const atAccounts = await db()('ledgerAccounts').where({ tenantId: at.tenant.id });
    const deAccounts = await db()('ledgerAccounts').where({ tenantId: de.tenant.id });
    expect(new Set(atAccounts.map((a) => a.chart))).toEqual(new Set(['EKR']));
    expect(new Set(deAccounts.map((a) => a.chart))).toEqual(new Set(['SKR03']));
    expect(atAccounts.map((a) => a.number)).toEqual(expect.arrayContaining(['7890', '2891', '2892', '2893', '2800']));
    expect(deAccounts.map((a) => a.number)).toEqual(expect.arrayContaining(['4900', '1361', '1362', '1363', '1200']));
    expect(new Set(deAccounts.map((a) => a.number)).size).toBe(deAccounts.length);
  });
});

describe('settings', () => {
  it('validates references: accounts by kind in the tenant chart, the supplier in the tenant', async () => {
    const { admin } = await createTeam();
    const other = await createTeam();
    const [foreign] = await db()('suppliers').insert({ tenantId: other.tenant.id, name: 'Fremd' }).returning('*');
    await install(env.server.url, admin.token, 'stripe', { webhookSecret: SECRET });
    const bad = await api(admin.token).put('/api/connectors/stripe/settings', {
      expenseAccount: '9999',
      clearingAccount: '7890',
      defaultSupplierId: foreign.id,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['clearingAccount', 'defaultSupplierId', 'expenseAccount']);
    expect((await api(admin.token).put('/api/connectors/stripe/settings', { autoPost: 'yes' })).status).toBe(400);
    expect((await api(admin.token).put('/api/connectors/stripe/settings', { other: 1 })).status).toBe(400);
    const ok = await api(admin.token).put('/api/connectors/stripe/settings', { autoPost: true, expenseAccount: '7600', clearingAccount: '2890' });
    expect(ok.status).toBe(200);
    expect(ok.body.settings).toEqual({ autoPost: true, defaultSupplierId: null, expenseAccount: '7600', clearingAccount: '2890' });
    // Partial: absent fields stay.
    const partial = await api(admin.token).put('/api/connectors/stripe/settings', { autoPost: false });
    expect(partial.body.settings).toEqual({ autoPost: false, defaultSupplierId: null, expenseAccount: '7600', clearingAccount: '2890' });
  });
});

describe('webhook-logs', () => {
  it('manager and above; only the tenant’s rows of that provider, newest first; limit default 50, max 200', async () => {
    const a = await createTeam();
    const b = await createTeam();
    const now = Date.now();
    const rows = Array.from({ length: 60 }, (_, i) => ({
      tenantId: a.tenant.id,
      provider: 'stripe',
      event: 'invoice.payment_succeeded',
      status: 'processed',
      externalId: `evt_${i}`,
      receivedAt: new Date(now - (60 - i) * 1000),
      processedAt: new Date(now - (60 - i) * 1000 + 500),
    }));
    await db()('webhookEvents').insert(rows);
    await db()('webhookEvents').insert({ tenantId: a.tenant.id, provider: 'bank', event: 'payment_completed', status: 'processed', externalId: 'bank_1' });
    await db()('webhookEvents').insert({ tenantId: b.tenant.id, provider: 'stripe', event: 'x', status: 'failed', externalId: 'evt_b' });

    expect((await api(a.member.token).get('/api/connectors/stripe/webhook-logs')).status).toBe(403);
    expect((await api(a.viewer.token).get('/api/connectors/stripe/webhook-logs')).status).toBe(403);
    const res = await api(a.manager.token).get('/api/connectors/stripe/webhook-logs');
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body).toHaveLength(50);
    expect(res.body[0].externalId).toBe('evt_59');
    expect(Object.keys(res.body[0]).sort()).toEqual(['event', 'externalId', 'id', 'processedAt', 'provider', 'receivedAt', 'status']);
    expect(res.body.every((r: { provider: string }) => r.provider === 'stripe')).toBe(true);
    expect((await api(a.admin.token).get('/api/connectors/stripe/webhook-logs?limit=200')).body).toHaveLength(60);
    expect((await api(a.admin.token).get('/api/connectors/stripe/webhook-logs?limit=2')).body.map((r: { externalId: string }) => r.externalId)).toEqual([
      'evt_59',
      'evt_58',
    ]);
    expect((await api(a.admin.token).get('/api/connectors/stripe/webhook-logs?limit=201')).status).toBe(400);
    expect((await api(a.admin.token).get('/api/connectors/stripe/webhook-logs?limit=0')).status).toBe(400);
    expect((await api(a.admin.token).get('/api/connectors/nope/webhook-logs')).status).toBe(404);
    const theirs = await api(b.manager.token).get('/api/connectors/stripe/webhook-logs');
    expect(theirs.body.map((r: { externalId: string }) => r.externalId)).toEqual(['evt_b']);
  });
});

describe('test-webhook', () => {
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ['stripe', { webhookSecret: SECRET }, /stored webhook secret/],
    ['bank', { webhookSecret: SECRET }, /stored webhook secret/],
    ['paypal', { webhookId: 'WH-test' }, /stored webhook id with a throwaway RSA key.*paypal verification code/],
    ['mollie', { apiKey: 'test_unused' }, /stored API key from an in-memory Mollie API.*mollie verification code/],
    ['mollie', { apiKey: 'test_unused', signingSecret: 'mollie-signing-secret' }, /X-Mollie-Signature made with the stored signing secret/],
  ];
  afterEach(() => {
    vi.restoreAllMocks();
  });
  for (const [slug, secrets, signatureDetail] of cases) {
    it(`${slug}${secrets.signingSecret ? ' (with signing secret)' : ''}: a correctly signed event through the real verification and every step; nothing persists, no network`, async () => {
      const { tenant, admin, manager, member } = await createTeam();
      await install(env.server.url, admin.token, slug, secrets);
      await api(admin.token).put(`/api/connectors/${slug}/settings`, { autoPost: true });
      const before = await tenantRowCounts(tenant.id);
      // The API runs in this process: any outbound call verification made would go through here.
      const realFetch = globalThis.fetch;
      const outbound: string[] = [];
      vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
        const url = String(input instanceof Request ? input.url : input);
        if (!url.startsWith(env.server.url)) outbound.push(url);
        return realFetch(input, init);
      });
      const res = await api(manager.token).post(`/api/connectors/${slug}/test-webhook`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.ok, JSON.stringify(res.body.steps)).toBe(true);
      expect(res.body.steps.map((s: { step: string }) => s.step)).toEqual(['signature', 'tenant', 'supplier', 'invoice', 'duplicate', 'autoPost']);
      expect(res.body.steps.map((s: { result: string }) => s.result)).toEqual(['verified', 'resolved', 'created', 'created', 'unique', 'posted']);
      expect(res.body.steps[0].detail).toMatch(signatureDetail);
      expect(outbound).toEqual([]);
      expect(await tenantRowCounts(tenant.id)).toEqual(before);
      expect((await api(member.token).post(`/api/connectors/${slug}/test-webhook`)).status).toBe(403);
    });
  }

  it('not installed → 404; with auto-post off the autoPost step says skipped', async () => {
    const { admin } = await createTeam();
    expect((await api(admin.token).post('/api/connectors/stripe/test-webhook')).status).toBe(404);
    await install(env.server.url, admin.token, 'stripe', { webhookSecret: SECRET });
    const off = await api(admin.token).post('/api/connectors/stripe/test-webhook');
    expect(off.body.ok).toBe(true);
    expect(off.body.steps[0]).toMatchObject({ step: 'signature', result: 'verified' });
    expect(off.body.steps.at(-1)).toMatchObject({ step: 'autoPost', result: 'skipped' });
  });
});
