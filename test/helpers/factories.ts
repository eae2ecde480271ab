import { randomUUID } from 'node:crypto';
import { db } from '../../shared/db';
import { hashPassword } from '../../shared/auth/passwords';
import { signAccessToken } from '../../shared/auth/accessToken';
import type { Role } from '../../shared/actor';
import { proofNow } from '../../shared/auth/freshProof';

/**
 * Factories give every test its own tenant, so tests never see each other's data and can run in
 * parallel against one database. Rows are inserted directly; HTTP tests then act through the API.
 */
export const TEST_PASSWORD = 'correct-horse-battery-staple';
let passwordHash: Promise<string> | null = null;
const testHash = () => (passwordHash ??= hashPassword(TEST_PASSWORD));

export interface TestTenant {
  id: string;
  name: string;
  country: string;
  plan: string;
}

export async function createTenant(overrides: Partial<Record<string, unknown>> = {}): Promise<TestTenant> {
  const [row] = await db()('tenants')
    .insert({
      name: `Test GmbH ${randomUUID().slice(0, 8)}`,
      country: 'AT',
      vatId: 'ATU12345678',
      taxNumber: '12-345/6789',
      address: 'Hauptstraße 1\n1010 Wien',
      email: 'office@test.example',
      iban: 'AT611904300234573201',
      bic: 'BKAUATWW',
      plan: 'free',
      ...overrides,
    })
    .returning('*');
  return row;
}

export interface TestUser {
  id: string;
  tenantId: string;
  email: string;
  role: Role;
  token: string;
}

export async function createUser(tenant: { id: string }, role: Role = 'admin', overrides: Record<string, unknown> = {}): Promise<TestUser> {
  const email = `${role}-${randomUUID().slice(0, 12)}@test.example`;
  const [row] = await db()('users')
    .insert({ tenantId: tenant.id, email, name: `Test ${role}`, role, passwordHash: await testHash(), ...overrides })
    .returning('*');
  // As if just logged in with the password: a fresh proof (docs/auth.md, "Fresh proof").
  const token = signAccessToken({ sub: row.id, tid: tenant.id, role: row.role, ...proofNow(['pwd']) });
  return { id: row.id, tenantId: tenant.id, email: row.email, role: row.role, token };
}

/** A tenant with one user per role: { tenant, admin, manager, member, viewer }. */
export async function createTeam(tenantOverrides: Partial<Record<string, unknown>> = {}) {
  const tenant = await createTenant(tenantOverrides);
  const [admin, manager, member, viewer] = await Promise.all((['admin', 'manager', 'member', 'viewer'] as Role[]).map((r) => createUser(tenant, r)));
  return { tenant, admin, manager, member, viewer };
}
