import { expect, it } from 'vitest';
import { hasNul, pathOfNul, withoutNul } from '../../shared/nulCharacter';

it('pathOfNul names the first field holding U+0000, in values and keys, or null', () => {
  expect(pathOfNul({ name: 'ok', items: [{ description: 'ok' }, { description: 'a\u0000b' }] })).toBe('items.1.description');
  expect(pathOfNul({ meta: { 'k\u0000': 1 } })).toBe('meta.k\u0000');
  expect(pathOfNul('\u0000')).toBe('(root)');
  expect(pathOfNul({ name: 'Müller ✓ 𝄞', n: 0, x: null, list: [] })).toBeNull();
});

it('withoutNul drops U+0000 from every string and key and leaves the rest as it was', () => {
  const input = { name: 'Nul\u0000 GmbH', amounts: [1, '2\u0000'], nested: { 'a\u0000b': true, none: null } };
  expect(withoutNul(input)).toEqual({ name: 'Nul GmbH', amounts: [1, '2'], nested: { ab: true, none: null } });
  expect(input.name).toBe('Nul\u0000 GmbH');
  expect(withoutNul(undefined)).toBeUndefined();
});

it('hasNul finds U+0000 in any string, key or array element, at any depth; a value without one is returned as is, not copied', () => {
  expect(hasNul({ a: [{ b: ['x', 'y\u0000'] }] })).toBe(true);
  expect(hasNul({ a: { 'k\u0000': 1 } })).toBe(true);
  expect(hasNul(['\u0000'])).toBe(true);
  expect(hasNul({ name: 'Müller ✓ 𝄞', n: 0, x: null, t: true, list: [[]], nested: { deep: ['\\u0000 as text'] } })).toBe(false);
  const clean = { name: 'Zahler GmbH', lines: [{ amount: '10.00' }] };
  expect(withoutNul(clean)).toBe(clean);
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
