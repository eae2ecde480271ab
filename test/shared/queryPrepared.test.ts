import { afterAll, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { db, queryPrepared } from '../../shared/db';

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
