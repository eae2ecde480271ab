import { expect } from 'vitest';
import type { HttpResponse } from '../../helpers/http';

/** The refresh cookie of a response: value and raw header (attributes checked by tests). */
export function refreshCookie(res: HttpResponse): { value: string; header: string } | null {
  const header = res.headers.getSetCookie().find((c) => c.startsWith('refreshToken='));
  if (!header) return null;
  return { value: header.slice('refreshToken='.length).split(';')[0], header };
}

export const cookieHeader = (value: string) => ({ cookie: `refreshToken=${value}` });

export const expectError = (res: HttpResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ error: { status, code, message: expect.any(String) } });
};

let n = 0;
export const uniqueEmail = (tag = 'user') => `${tag}-${Date.now().toString(36)}-${++n}-${Math.random().toString(36).slice(2, 8)}@Example.test`;

export const registration = (overrides: Record<string, unknown> = {}) => ({
  email: uniqueEmail('reg'),
  password: 'a-long-enough-password',
  name: 'Anna Admin',
  companyName: 'Muster GmbH',
  ...overrides,
});
