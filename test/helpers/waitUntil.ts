/**
 * Poll `check` until it returns something truthy (that value is returned) or `timeoutMs` passes;
 * a check that throws counts as not yet, and the last error is named when the wait times out.
 */
export async function waitUntil<T>(check: () => Promise<T | undefined | null | false>, what: string, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
}
