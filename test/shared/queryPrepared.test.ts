import { afterAll, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { db, queryPrepared, runPrepared, type Db } from '../../shared/db';

const table = `prep_test_${randomBytes(4).toString('hex')}`;
afterAll(async () => {
  await db().schema.dropTableIfExists(table);
});

it('a prepared read maps columns to camelCase and survives a migration that changes its result type', async () => {
  await db().schema.createTable(table, (t) => {
    t.integer('some_value');
  });
  await db()(table).insert({ someValue: 7 });
  const read = () => queryPrepared<{ someValue: number; addedLater?: string | null }>(db(), `read-${table}`, db()(table).select('*').toSQL().toNative());
  // Several calls so the pool's connections have the statement prepared.
  for (let i = 0; i < 5; i++) expect(await read()).toEqual([{ someValue: 7 }]);
  // A migration adds a column: "select *" now returns another row type than the prepared plan.
  await db().schema.alterTable(table, (t) => {
    t.text('added_later');
  });
  for (let i = 0; i < 5; i++) expect(await read()).toEqual([{ someValue: 7, addedLater: null }]);
});

it('runPrepared in a transaction runs on its connection (sees its uncommitted rows) and is seen by knex query listeners', async () => {
  const t2 = `${table}_trx`;
  await db().schema.createTable(t2, (t) => {
    t.integer('n');
  });
  try {
    const seen: string[] = [];
    const listener = (q: { sql: string }) => seen.push(q.sql);
    db().on('query', listener);
    const count = (k: Db) => runPrepared<{ c: number }>(k, k(t2).count({ c: '*' }));
    await db().transaction(async (trx) => {
      await trx(t2).insert({ n: 1 });
      expect(await count(trx)).toEqual([{ c: 1 }]);
      expect(await count(db())).toEqual([{ c: 0 }]); // another connection: not committed yet
      await trx.rollback();
    }).catch(() => undefined);
    db().off('query', listener);
    expect(await count(db())).toEqual([{ c: 0 }]);
    expect(seen.filter((s) => s.includes(`"${t2}"`) && s.startsWith('select count'))).toHaveLength(2);
  } finally {
    await db().schema.dropTableIfExists(t2);
  }
});
