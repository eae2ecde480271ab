/**
 * The service's notion of "now" for rules that span minutes or hours (account lockout, TOTP
 * steps, refresh-token expiry). Production reads the system clock; tests move time forward with
 * setClock() instead of sleeping. Only time-based business rules read it; timestamps that the
 * database writes (created_at) keep using now() in SQL.
 */
let source: () => number = () => Date.now();

export const now = (): Date => new Date(source());
export const nowMs = (): number => source();

/** Tests: replace the clock (e.g. () => fixedMs); call resetClock() afterwards. */
export function setClock(fn: () => number): void {
  source = fn;
}

/** Tests: shift the clock by ms relative to the real time. */
export function advanceClock(ms: number): void {
  const prev = source;
  source = () => prev() + ms;
}

export function resetClock(): void {
  source = () => Date.now();
}
