import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server';
import { client } from '../helpers/http';
import { createTeam } from '../helpers/factories';
import { API_KEY_REFUSED_PREFIXES } from '../../api/middleware/authenticate';
import { allRoutes, describeResponse, envelopeProblem, fillPath, rank, ROLE_ORDER, routeName } from './routes';
import type { Role } from '../../shared/actor';

/**
 * The role matrix of roles.test.ts with API keys instead of access tokens, over every protected
 * route in routeRegistry: a key of each role is 403 FORBIDDEN below the route's role and on the
 * routes no key may reach (users, API keys, /api/auth), and elsewhere neither 401, 403 nor 500
 * (a route that needs a person, e.g. reads actor.userId, would show up here as a 500).
 */
let server: Awaited<ReturnType<typeof startTestServer>>;
const keys = {} as Record<Role, string>;

beforeAll(async () => {
  server = await startTestServer();
  const team = await createTeam({ plan: 'business' });
  const asAdmin = client(server.url, { token: team.admin.token });
  for (const role of ROLE_ORDER) {
    const res = await asAdmin.post('/api/api-keys', { name: `matrix ${role}`, role });
    expect(res.status, describeResponse(res)).toBe(201);
    keys[role] = res.body.key;
  }
});
afterAll(async () => {
  await server?.close();
});

const protectedRoutes = allRoutes().filter((r) => r.auth !== 'public');
const refused = (fullPath: string) => API_KEY_REFUSED_PREFIXES.some((p) => fullPath === p || fullPath.startsWith(`${p}/`));

describe('API keys over every protected route', () => {
  it('covers the protected routes, some of them refused to keys', () => {
    expect(protectedRoutes.length).toBeGreaterThan(40);
    expect(protectedRoutes.filter((r) => refused(r.fullPath)).length).toBeGreaterThan(10);
  });

  for (const route of protectedRoutes) {
    it(`${routeName(route)} (needs ${route.auth}${refused(route.fullPath) ? ', never a key' : ''})`, async () => {
      const path = fillPath(route.fullPath, {});
      const withBody = ['post', 'put', 'patch'].includes(route.method) ? { body: {} } : {};
      for (const role of ROLE_ORDER) {
        const res = await client(server.url, { token: keys[role] }).request(route.method.toUpperCase(), path, withBody);
        const where = `${role} key on ${routeName(route)}: ${describeResponse(res)}`;
        if (refused(route.fullPath) || rank(role) < rank(route.auth as Role)) {
          expect(res.status, where).toBe(403);
          expect(res.body.error.code, where).toBe('FORBIDDEN');
          expect(envelopeProblem(res), where).toBeNull();
        } else {
          expect([401, 403], where).not.toContain(res.status);
          expect(res.status, where).not.toBe(500);
        }
      }
    });
  }
});
