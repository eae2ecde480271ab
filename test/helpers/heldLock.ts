import type { Knex } from 'knex';
import { db } from '../../shared/db';
import { waitUntil } from './waitUntil';

/**
 * A transaction of the test's own holding the locks `take` acquires, so that the code under test
 * meets them: `blocked()` waits until another backend waits for them, `release()` (safe to call
 * twice, e.g. in a finally) rolls the transaction back.
 */
export async function holdLocks(take: (trx: Knex.Transaction) => Promise<unknown>) {
  const trx = await db().transaction();
  const { rows } = await trx.raw('select pg_backend_pid() as pid');
  const pid = rows[0].pid as number;
  await take(trx);
  return {
    blocked: (what: string) =>
      waitUntil(async () => {
        const { rows: waiting } = await db().raw('select count(*)::int as n from pg_stat_activity where ? = any(pg_blocking_pids(pid))', [pid]);
        return waiting[0].n > 0;
      }, what),
    release: async () => {
      if (!trx.isCompleted()) await trx.rollback();
    },
  };
}
