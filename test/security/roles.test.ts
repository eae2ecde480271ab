import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server';
import { client } from '../helpers/http';
import { createTeam } from '../helpers/factories';
import { allRoutes, describeResponse, envelopeProblem, fillPath, rank, ROLE_ORDER, routeName } from './routes';
import type { Role } from '../../shared/actor';

/**
 * The role matrix, from routeRegistry: every protected route with every role. Below the route's
 * `auth` → 403 FORBIDDEN (before validation, so any body); at or above → neither 401 nor 403
 * (the request may still be a 400/404: ids are random UUIDs, so nothing is changed). Without a
 * token → 401 UNAUTHORIZED. The tenant is on the business plan so PLAN_LIMIT does not interfere.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;
let team: Awaited<ReturnType<typeof createTeam>>;

beforeAll(async () => {
  server = await startTestServer();
  team = await createTeam({ plan: 'business' });
});
afterAll(async () => {
  await server?.close();
});

const protectedRoutes = allRoutes().filter((r) => r.auth !== 'public');

describe('role matrix over every protected route', () => {
  it('covers the protected routes', () => {
    expect(protectedRoutes.length).toBeGreaterThan(40);
  });

  for (const route of protectedRoutes) {
    it(`${routeName(route)} (needs ${route.auth})`, async () => {
      const path = fillPath(route.fullPath, {});
      const withBody = ['post', 'put', 'patch'].includes(route.method) ? { body: {} } : {};
      const anon = await client(server.url).request(route.method.toUpperCase(), path, withBody);
      expect(anon.status, describeResponse(anon)).toBe(401);
      expect(envelopeProblem(anon)).toBeNull();
      expect(anon.body.error.code).toBe('UNAUTHORIZED');

      for (const role of ROLE_ORDER) {
        const res = await client(server.url, { token: team[role as Role].token }).request(route.method.toUpperCase(), path, withBody);
        const where = `${role} on ${routeName(route)}: ${describeResponse(res)}`;
        if (rank(role) < rank(route.auth as Role)) {
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
