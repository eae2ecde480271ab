import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam, createUser, TEST_PASSWORD } from '../../helpers/factories';
import { db } from '../../../shared/db';
import { cookieHeader, expectError, refreshCookie, uniqueEmail } from './authHelpers';

let server: Awaited<ReturnType<typeof startTestServer>>;
let http: TestClient;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});
afterAll(async () => server.close());

const newUser = (role: string, overrides: Record<string, unknown> = {}) => ({
  email: uniqueEmail(role),
  name: `New ${role}`,
  role,
  password: 'another-long-password',
  ...overrides,
});
const SECRET_WORDS = /password|hash|totp|secret|recovery|challenge/i;

describe('role matrix', () => {
  it('GET /api/users: manager and admin 200; member and viewer 403', async () => {
    const team = await createTeam();
    for (const r of ['viewer', 'member'] as const) expectError(await http.get('/api/users', { token: team[r].token }), 403, 'FORBIDDEN');
    for (const r of ['manager', 'admin'] as const) {
      const res = await http.get('/api/users', { token: team[r].token });
      expect(res.status).toBe(200);
      expect(res.body.pagination).toEqual({ page: 1, limit: 25, total: 4, totalPages: 1 });
      expect(res.body.data.map((u: { role: string }) => u.role).sort()).toEqual(['admin', 'manager', 'member', 'viewer']);
      expect(JSON.stringify(res.body)).not.toMatch(SECRET_WORDS);
    }
  });

  it('POST /api/users: admin any role; manager member/viewer only; member and viewer 403', async () => {
    const team = await createTeam();
    for (const r of ['viewer', 'member'] as const) expectError(await http.post('/api/users', newUser('viewer'), { token: team[r].token }), 403, 'FORBIDDEN');
    for (const role of ['member', 'viewer']) expect((await http.post('/api/users', newUser(role), { token: team.manager.token })).status).toBe(201);
    for (const role of ['manager', 'admin']) expectError(await http.post('/api/users', newUser(role), { token: team.manager.token }), 403, 'FORBIDDEN');
    for (const role of ['admin', 'manager', 'member', 'viewer']) {
      const res = await http.post('/api/users', newUser(role), { token: team.admin.token });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ role, active: true, tenantId: team.tenant.id, twoFactorEnabled: false });
      expect(JSON.stringify(res.body)).not.toMatch(SECRET_WORDS);
    }
  });

  it('PUT and DELETE: a manager cannot touch admins or managers nor promote', async () => {
    const team = await createTeam();
    const other = await createUser(team.tenant, 'manager');
    for (const target of [team.admin, other]) {
      expectError(await http.put(`/api/users/${target.id}`, { name: 'x' }, { token: team.manager.token }), 403, 'FORBIDDEN');
      expectError(await http.delete(`/api/users/${target.id}`, { token: team.manager.token }), 403, 'FORBIDDEN');
    }
    expectError(await http.put(`/api/users/${team.member.id}`, { role: 'manager' }, { token: team.manager.token }), 403, 'FORBIDDEN');
    const ok = await http.put(`/api/users/${team.member.id}`, { role: 'viewer', name: 'Renamed' }, { token: team.manager.token });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ role: 'viewer', name: 'Renamed' });
    for (const r of ['viewer', 'member'] as const) {
      expectError(await http.put(`/api/users/${team.viewer.id}`, { name: 'x' }, { token: team[r].token }), 403, 'FORBIDDEN');
      expectError(await http.delete(`/api/users/${team.viewer.id}`, { token: team[r].token }), 403, 'FORBIDDEN');
    }
  });
});

describe('users', () => {
  it('created user can log in; duplicate e-mail (any case) → 409; validation → 400', async () => {
    const { admin } = await createTeam();
    const body = newUser('member');
    expect((await http.post('/api/users', body, { token: admin.token })).status).toBe(201);
    const login = await http.post('/api/auth/login', { email: body.email, password: body.password });
    expect(login.status).toBe(200);
    expect(login.body.user.role).toBe('member');
    expectError(await http.post('/api/users', { ...body, email: body.email.toLowerCase() }, { token: admin.token }), 409, 'DUPLICATE');
    // Also across tenants: e-mails are unique service-wide.
    const otherTeam = await createTeam();
    expectError(await http.post('/api/users', { ...newUser('viewer'), email: otherTeam.viewer.email }, { token: admin.token }), 409, 'DUPLICATE');
    expectError(await http.post('/api/users', newUser('member', { password: 'short' }), { token: admin.token }), 400, 'INVALID_INPUT');
    expectError(await http.post('/api/users', newUser('owner'), { token: admin.token }), 400, 'INVALID_INPUT');
    expectError(await http.put(`/api/users/${admin.id}`, {}, { token: admin.token }), 400, 'INVALID_INPUT');
    expectError(await http.put(`/api/users/not-a-uuid`, { name: 'x' }, { token: admin.token }), 400, 'INVALID_INPUT');
  });

  it('U+0000 in a body is 400 naming the field (the database cannot store it), never a 500', async () => {
    const { admin } = await createTeam();
    const res = await http.post('/api/users', newUser('viewer', { name: 'Nul\u0000Byte' }), { token: admin.token });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.error.details).toEqual([{ field: 'name', message: 'must not contain the NUL character (U+0000)' }]);
    const renamed = await http.put(`/api/users/${admin.id}`, { name: 'Admin\u0000' }, { token: admin.token });
    expectError(renamed, 400, 'INVALID_INPUT');
    expect(renamed.body.error.details).toEqual([{ field: 'name', message: 'must not contain the NUL character (U+0000)' }]);
  });

  it('pagination: page/limit and out-of-range values', async () => {
    const { admin } = await createTeam();
    const res = await http.get('/api/users?page=2&limit=3', { token: admin.token });
    expect(res.body.pagination).toEqual({ page: 2, limit: 3, total: 4, totalPages: 2 });
    expect(res.body.data).toHaveLength(1);
    expectError(await http.get('/api/users?limit=101', { token: admin.token }), 400, 'INVALID_INPUT');
    expectError(await http.get('/api/users?page=0', { token: admin.token }), 400, 'INVALID_INPUT');
  });

  it('password change ends the user’s sessions; the new password works', async () => {
    const { admin, member } = await createTeam();
    const login = await http.post('/api/auth/login', { email: member.email, password: TEST_PASSWORD });
    const cookie = refreshCookie(login)!.value;
    expect((await http.put(`/api/users/${member.id}`, { password: 'brand-new-password' }, { token: admin.token })).status).toBe(200);
    expectError(await http.post('/api/auth/refresh', undefined, { headers: cookieHeader(cookie) }), 401, 'UNAUTHORIZED');
    expectError(await http.post('/api/auth/login', { email: member.email, password: TEST_PASSWORD }), 401, 'UNAUTHORIZED');
    expect((await http.post('/api/auth/login', { email: member.email, password: 'brand-new-password' })).status).toBe(200);
  });

  it('DELETE deactivates: 204, login → generic 401, refresh tokens revoked, still listed as inactive', async () => {
    const { admin, member } = await createTeam();
    const login = await http.post('/api/auth/login', { email: member.email, password: TEST_PASSWORD });
    const cookie = refreshCookie(login)!.value;
    expect((await http.delete(`/api/users/${member.id}`, { token: admin.token })).status).toBe(204);
    expect((await http.delete(`/api/users/${member.id}`, { token: admin.token })).status).toBe(204);
    expectError(await http.post('/api/auth/login', { email: member.email, password: TEST_PASSWORD }), 401, 'UNAUTHORIZED');
    expectError(await http.post('/api/auth/refresh', undefined, { headers: cookieHeader(cookie) }), 401, 'UNAUTHORIZED');
    const row = await db()('users').where({ id: member.id }).first();
    expect(row.active).toBe(false);
    const list = await http.get('/api/users', { token: admin.token });
    expect(list.body.data.find((u: { id: string }) => u.id === member.id).active).toBe(false);
    expect(await db()('auditLog').where({ entityId: member.id, action: 'user.deactivated' }).first()).toBeTruthy();
  });

  it('the last active admin cannot be demoted or deactivated (400 DEPENDENCY); with a second admin it can', async () => {
    const { admin } = await createTeam();
    expectError(await http.put(`/api/users/${admin.id}`, { role: 'manager' }, { token: admin.token }), 400, 'DEPENDENCY');
    expectError(await http.delete(`/api/users/${admin.id}`, { token: admin.token }), 400, 'DEPENDENCY');
    const second = await http.post('/api/users', newUser('admin'), { token: admin.token });
    expect((await http.put(`/api/users/${admin.id}`, { role: 'manager' }, { token: admin.token })).status).toBe(200);
    // The demoted admin's access token still says admin, but its rights are re-read: now a manager.
    expectError(await http.delete(`/api/users/${second.body.id}`, { token: admin.token }), 403, 'FORBIDDEN');
    // The remaining admin is now the last one.
    const adminLogin = await http.post('/api/auth/login', { email: second.body.email, password: 'another-long-password' });
    expectError(await http.delete(`/api/users/${second.body.id}`, { token: adminLogin.body.token }), 400, 'DEPENDENCY');
  });

  it('a deactivated manager’s still-valid access token cannot manage users (401)', async () => {
    const { admin, manager } = await createTeam();
    expect((await http.delete(`/api/users/${manager.id}`, { token: admin.token })).status).toBe(204);
    expectError(await http.post('/api/users', newUser('viewer'), { token: manager.token }), 401, 'UNAUTHORIZED');
  });

  it('two admins demoting each other concurrently: one wins, one admin remains', async () => {
    const { tenant, admin } = await createTeam();
    const admin2 = await createUser(tenant, 'admin');
    const [a, b] = await Promise.all([
      http.put(`/api/users/${admin2.id}`, { role: 'viewer' }, { token: admin.token }),
      http.put(`/api/users/${admin.id}`, { role: 'viewer' }, { token: admin2.token }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 400]);
    const admins = await db()('users').where({ tenantId: tenant.id, role: 'admin', active: true });
    expect(admins).toHaveLength(1);
  });

  it('users of another tenant are 404 for GET, PUT and DELETE', async () => {
    const mine = await createTeam();
    const theirs = await createTeam();
    expectError(await http.get(`/api/users/${theirs.member.id}`, { token: mine.admin.token }), 404, 'NOT_FOUND');
    expectError(await http.put(`/api/users/${theirs.member.id}`, { name: 'hijack' }, { token: mine.admin.token }), 404, 'NOT_FOUND');
    expectError(await http.delete(`/api/users/${theirs.member.id}`, { token: mine.admin.token }), 404, 'NOT_FOUND');
    const row = await db()('users').where({ id: theirs.member.id }).first();
    expect(row).toMatchObject({ name: 'Test member', active: true });
    const list = await http.get('/api/users', { token: mine.admin.token });
    expect(list.body.data.every((u: { tenantId: string }) => u.tenantId === mine.tenant.id)).toBe(true);
  });
});
