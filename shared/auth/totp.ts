import { generateSecret, generateURI, verify } from 'otplib';
import { nowMs } from '../clock';

/**
 * TOTP (RFC 6238): SHA-1, 6 digits, 30 s, as every authenticator app expects. Verification
 * accepts one step either side (clock drift) and never the same or an earlier step twice
 * (replay protection via the last used step stored on the user).
 */
export const TOTP_PERIOD_SEC = 30;

export const newTotpSecret = () => generateSecret({ length: 20 });

export const totpUri = (secret: string, account: string, issuer: string) => generateURI({ issuer, label: account, secret, period: TOTP_PERIOD_SEC });

/** The matched time step, or null when the code is wrong, outside ±1 step, or already used. */
export async function verifyTotp(secret: string, code: string, lastUsedStep: number | null): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null;
  const result = await verify({
    secret,
    token: code,
    period: TOTP_PERIOD_SEC,
    epoch: Math.floor(nowMs() / 1000),
    epochTolerance: TOTP_PERIOD_SEC,
    ...(lastUsedStep !== null && lastUsedStep !== undefined ? { afterTimeStep: lastUsedStep } : {}),
  });
  return result.valid ? ((result as { timeStep?: number }).timeStep ?? Math.floor(nowMs() / 1000 / TOTP_PERIOD_SEC)) : null;
}
