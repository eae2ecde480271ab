import { purgeStaleUnknownLoginAttempts } from '../../../shared/auth/lockout';

/** Lockout rows of unknown e-mails matter only while a lockout can still run: hourly clean-up. */
export async function purgeUnknownLoginAttemptsJob() {
  return { purged: await purgeStaleUnknownLoginAttempts() };
}
