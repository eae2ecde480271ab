/** Thrown by withTimeout when the awaited work did not settle in time. */
export class TimeoutError extends Error {}

/**
 * The result of `work`, or a TimeoutError(message) after `ms`. For calls to a dependency that may
 * hang rather than fail (a Redis that stopped answering, a database behind a dead route): the
 * caller must answer anyway. The timer is cleared when the work settles and never keeps the
 * process alive; the work itself is not cancelled.
 */
export async function withTimeout<T>(work: PromiseLike<T>, ms: number, message = 'timed out'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(message)), ms);
    timer.unref();
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
