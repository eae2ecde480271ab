import { afterAll, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { db, queryPrepared, runCompiled, type Db } from '../../shared/db';

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

it('a compiled statement in a transaction runs on its connection (sees its uncommitted rows) and is seen by knex query listeners', async () => {
  const t2 = `${table}_trx`;
  await db().schema.createTable(t2, (t) => {
    t.integer('n');
  });
  try {
    const seen: string[] = [];
    const listener = (q: { sql: string }) => seen.push(q.sql);
    db().on('query', listener);
    const count = (k: Db) => runCompiled<{ c: number }>(k, `count-${t2}`, [], () => k(t2).count({ c: '*' }));
    await db()
      .transaction(async (trx) => {
        await trx(t2).insert({ n: 1 });
        expect(await count(trx)).toEqual([{ c: 1 }]);
        expect(await count(db())).toEqual([{ c: 0 }]); // another connection: not committed yet
        await trx.rollback();
      })
      .catch(() => undefined);
    db().off('query', listener);
    expect(await count(db())).toEqual([{ c: 0 }]);
    expect(seen.filter((s) => s.includes(`"${t2}"`) && s.startsWith('select count'))).toHaveLength(2);
  } finally {
    await db().schema.dropTableIfExists(t2);
  }
});

it('runCompiled builds once and binds each call: constants stay, arrays and nulls bind as values, a changed argument throws', async () => {
  const t3 = `${table}_compiled`;
  await db().schema.createTable(t3, (t) => {
    t.text('name');
    t.text('kind');
    t.timestamp('at');
  });
  try {
    let builds = 0;
    const key = `insert-${t3}`;
    const insert = (name: string | null, kind: string) =>
      runCompiled<{ name: string | null; kind: string; fresh: boolean }>(db(), key, [name, kind], (n, k) => {
        builds++;
        // fixed in the text: a column as SQL (now()) and a constant binding ('x' in the CTE)
        return db()
          .queryBuilder()
          .with('ins', db()(t3).insert({ name: n, kind: k, at: db().fn.now() }).returning(['name', 'kind', 'at']))
          .select('name', 'kind', db().raw("at > now() - interval '1 minute' and ? = 'x' as fresh", ['x']))
          .from('ins');
      });
    expect(await insert('a', 'one')).toEqual([{ name: 'a', kind: 'one', fresh: true }]);
    expect(await insert(null, 'two')).toEqual([{ name: null, kind: 'two', fresh: true }]);
    expect(await db()(t3).orderBy('kind').select('name', 'kind')).toEqual([
      { name: 'a', kind: 'one' },
      { name: null, kind: 'two' },
    ]);
    expect(builds).toBe(1);

    const byKinds = (kinds: string[]) =>
      runCompiled<{ c: number }>(db(), `count-${t3}`, [kinds], (k) => db()(t3).whereRaw('kind = any(?::text[])', [k]).count({ c: '*' }));
    expect(await byKinds(['one'])).toEqual([{ c: 1 }]);
    expect(await byKinds(['one', 'two', 'three'])).toEqual([{ c: 2 }]);

    // An argument changed before binding, or one the text leaves out, would be fixed in the text
    // with the first call's value (or ignored): refused on the first call.
    await expect(
      runCompiled(db(), `sliced-${t3}`, ['abc'], (n) =>
        db()(t3)
          .where({ name: n.slice(0, 2) })
          .select('name'),
      ),
    ).rejects.toThrow(/argument was changed/);
    await expect(runCompiled(db(), `unbound-${t3}`, ['a', 'one'], (n) => db()(t3).where({ name: n }).select('name'))).rejects.toThrow(
      /argument 1 is not bound/,
    );
  } finally {
    await db().schema.dropTableIfExists(t3);
  }
});
