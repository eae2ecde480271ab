/**
 * The security suites are driven by api/routing.ts's routeRegistry (method, fullPath, auth,
 * schemas of every mounted route), so a new route is fuzzed and put through the role and
 * isolation matrices without touching these tests.
 */
import { randomUUID } from 'node:crypto';
import { routers } from '../../api/routes';
import { routeRegistry, type RegisteredRoute } from '../../api/routing';
import type { Role } from '../../shared/actor';
import type { HttpResponse } from '../helpers/http';

void routers; // importing the route groups fills routeRegistry

export const ROLE_ORDER: Role[] = ['viewer', 'member', 'manager', 'admin'];
export const rank = (r: Role) => ROLE_ORDER.indexOf(r);

export const allRoutes = (): RegisteredRoute[] => routeRegistry;
export const routeName = (r: RegisteredRoute) => `${r.method.toUpperCase()} ${r.fullPath}`;
export const paramNames = (fullPath: string) => [...fullPath.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]);

/** Values for path parameters that are not tenant-owned ids. */
export const FIXED_PARAMS: Record<string, string> = { slug: 'stripe', provider: 'stripe', token: 'no-such-token-0123456789', asset: 'no-such-asset.js' };

export function fillPath(fullPath: string, values: Record<string, string>): string {
  return fullPath.replace(/:([A-Za-z_]+)/g, (_, name: string) => encodeURIComponent(values[name] ?? FIXED_PARAMS[name] ?? randomUUID()));
}

/** The spec's envelope, with error.status equal to the HTTP status. */
export function envelopeProblem(res: HttpResponse): string | null {
  const e = (res.body as { error?: { message?: unknown; code?: unknown; status?: unknown } } | null)?.error;
  if (!e) return 'no error object';
  if (typeof e.message !== 'string' || !e.message) return 'error.message is not a non-empty string';
  if (typeof e.code !== 'string' || !e.code) return 'error.code is not a non-empty string';
  if (e.status !== res.status) return `error.status ${String(e.status)} differs from HTTP ${res.status}`;
  return null;
}

export const describeResponse = (res: HttpResponse) =>
  `${res.status} ${Buffer.isBuffer(res.body) ? `<${res.body.length} bytes>` : JSON.stringify(res.body)?.slice(0, 400)}`;

/** Strings that have broken SQL built by concatenation somewhere, some time. */
export const SQL_INJECTIONS = [
  "' OR '1'='1",
  "' OR 1=1 --",
  "'; DROP TABLE invoices; --",
  '1; SELECT pg_sleep(3)',
  "' UNION SELECT id, name, null FROM tenants --",
  '%',
  '_',
  "\\'; --",
  '") OR ("1"="1',
  "admin'--",
  '$1',
  '?',
];
