import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { DEFAULT_PAYMENT_PROVIDER_CONFIG, type PaymentProviderConfig } from '../../../shared/providers/payments/types';
import type { SignatureFailure } from '../../../shared/providers/payments/errors';
import { SignatureError } from '../../../shared/providers/payments/errors';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** Raw bytes of a fixture, exactly as stored. */
export function fixtureBytes(path: string): Buffer {
  return readFileSync(join(FIXTURES, path));
}
export function fixtureJson<T = Record<string, any>>(path: string): T {
  return JSON.parse(fixtureBytes(path).toString('utf8')) as T;
}

export function testConfig(overrides: Partial<PaymentProviderConfig> = {}): PaymentProviderConfig {
  return {
    paypalCertHostAllowList: [...DEFAULT_PAYMENT_PROVIDER_CONFIG.paypalCertHostAllowList],
    mollieApiBaseUrl: 'http://127.0.0.1:9',
    providerHttpTimeoutMs: 2000,
    ...overrides,
  };
}

/** Asserts the promise rejects with a SignatureError for this exact reason. */
export async function expectSignatureError(p: Promise<unknown>, reason: SignatureFailure): Promise<SignatureError> {
  const err = await p.then(
    () => {
      throw new Error(`expected SignatureError(${reason}) but verification succeeded`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SignatureError);
  expect((err as SignatureError).reason).toBe(reason);
  expect((err as SignatureError).code).toBe('invalid_signature');
  return err as SignatureError;
}

export const unix = (d: Date) => Math.floor(d.getTime() / 1000);
