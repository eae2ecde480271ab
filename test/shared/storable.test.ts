import { expect, it } from 'vitest';
import { hasNul, isStorable, pathOfNul, storable, storableJson } from '../../shared/storable';

it('pathOfNul names the first field holding U+0000, in values and keys, or null', () => {
  expect(pathOfNul({ name: 'ok', items: [{ description: 'ok' }, { description: 'a\u0000b' }] })).toBe('items.1.description');
  expect(pathOfNul({ meta: { 'k\u0000': 1 } })).toBe('meta.k\u0000');
  expect(pathOfNul('\u0000')).toBe('(root)');
  expect(pathOfNul({ name: 'Müller ✓ 𝄞', n: 0, x: null, list: [] })).toBeNull();
});

it('storable drops U+0000 from every string and key and leaves the rest as it was', () => {
  const input = { name: 'Nul\u0000 GmbH', amounts: [1, '2\u0000'], nested: { 'a\u0000b': true, none: null } };
  expect(storable(input)).toEqual({ name: 'Nul GmbH', amounts: [1, '2'], nested: { ab: true, none: null } });
  expect(input.name).toBe('Nul\u0000 GmbH');
  expect(storable(undefined)).toBeUndefined();
});

it('hasNul finds U+0000 in any string, key or array element, at any depth; a value without one is returned as is, not copied', () => {
  expect(hasNul({ a: [{ b: ['x', 'y\u0000'] }] })).toBe(true);
  expect(hasNul({ a: { 'k\u0000': 1 } })).toBe(true);
  expect(hasNul(['\u0000'])).toBe(true);
  expect(hasNul({ name: 'Müller ✓ 𝄞', n: 0, x: null, t: true, list: [[]], nested: { deep: ['\\u0000 as text'] } })).toBe(false);
  const clean = { name: 'Zahler GmbH', lines: [{ amount: '10.00' }] };
  expect(storable(clean)).toBe(clean);
});

it('storable replaces lone surrogates (values and keys) by U+FFFD and keeps pairs; a clean value is returned as is', () => {
  const input = { name: 'Acme \ud800 Ltd', 'k\udc00': ['\ud83d', 'clip \ud83d\ude00'], pair: '𝄞 😀', n: 1, none: null };
  expect(isStorable(input)).toBe(false);
  const out = storable(input);
  expect(out).toEqual({ name: 'Acme \ufffd Ltd', 'k\ufffd': ['\ufffd', 'clip 😀'], pair: '𝄞 😀', n: 1, none: null });
  expect(input.name).toBe('Acme \ud800 Ltd');
  expect(isStorable(out)).toBe(true);
  expect(storable('a\u0000\udfff')).toBe('a\ufffd');
  const clean = { name: 'Müller ✓ 𝄞', list: [{ a: '10.00' }] };
  expect(isStorable(clean)).toBe(true);
  expect(storable(clean)).toBe(clean);
});

it('what storable returns, PostgreSQL stores as jsonb and as text; the lone surrogate as JSON.stringify writes it is refused', async () => {
  const { db } = await import('../../shared/db');
  const hostile = { name: 'Acme \ud800 Ltd\u0000', 'k\udbff': 'x' };
  const refused = await db()
    .raw('select ?::jsonb as j', [JSON.stringify({ name: 'Acme \ud800 Ltd' })])
    .then(
      () => null,
      (e: { code?: string }) => e.code,
    );
  expect(refused).toMatch(/^22P0[25]$/);
  const { rows } = await db().raw('select ?::jsonb as j, ?::text as t', [storableJson(hostile), storable(hostile.name)]);
  expect(rows[0]).toEqual({ j: { name: 'Acme \ufffd Ltd', 'k\ufffd': 'x' }, t: 'Acme \ufffd Ltd' });
});

it("the database's own refusal of U+0000 (text and jsonb) maps to 400 INVALID_INPUT, for input validate() does not see", async () => {
  const { db } = await import('../../shared/db');
  const { fromDatabaseError } = await import('../../shared/errors');
  for (const sql of ['select ?::text as t', 'select ?::jsonb as j']) {
    const value = sql.includes('jsonb') ? JSON.stringify({ name: 'a\u0000b' }) : 'a\u0000b';
    const err = await db()
      .raw(sql, [value])
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err, sql).not.toBeNull();
    expect(fromDatabaseError(err)).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
  }
});
