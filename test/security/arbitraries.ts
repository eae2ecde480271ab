/**
 * fast-check arbitraries for fuzzing the API: values shaped by a route's JSON schema (so many
 * requests get past validation into the handlers), hostile values (wrong types, huge strings,
 * unicode, NUL, extreme numbers, prototype keys, deep nesting) and broken JSON text.
 */
import fc from 'fast-check';
import { SQL_INJECTIONS } from './routes';

type Schema = Record<string, any>;

const HUGE = 'x'.repeat(100_000);

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '😀👩‍👩‍👧‍👦🇦🇹',
    '\u202Eevil\u202C',
    'مرحبا بالعالم',
    'Größl Straße ẞ',
    '\uFEFF',
    '\ud800',
    'null',
    'undefined',
    'NaN',
    'Infinity',
    '-0',
    '1e309',
    '0x1F',
    '9'.repeat(400),
    '2026-02-30',
    '2026-13-01',
    '99999-01-01',
    '-1',
    '<script>alert(1)</script>',
    '../../etc/passwd',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a Log4Shell probe, sent as it is
    '${jndi:ldap://x/a}',
    '{{7*7}}',
    '__proto__',
    ...SQL_INJECTIONS,
  ),
  fc.constant(HUGE),
);

export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  // biome-ignore lint/correctness/noPrecisionLoss: numbers JSON cannot carry exactly are the point
  fc.constantFrom(-1, 0, -0, 0.5, 1e308, -1e308, 2 ** 53 + 1, -(2 ** 63), 1e-9, 123456789012345678901234567890, 99999999999.999),
);

/** A tower of nested objects / arrays, deeper than any schema. */
export const deepNesting = fc.integer({ min: 50, max: 3000 }).chain((depth) =>
  fc.constantFrom('object', 'array').map((kind) => {
    let v: unknown = 'bottom';
    for (let i = 0; i < depth; i++) v = kind === 'object' ? { a: v } : [v];
    return v;
  }),
);

const leaf: fc.Arbitrary<unknown> = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null));

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: leaf },
  { weight: 2, arbitrary: fc.array(leaf, { maxLength: 5 }) },
  { weight: 2, arbitrary: fc.dictionary(hostileString, leaf, { maxKeys: 4 }) },
  { weight: 1, arbitrary: deepNesting },
  { weight: 1, arbitrary: fc.array(fc.constant({ description: 'x', quantity: 1 }), { minLength: 1000, maxLength: 5000 }) },
);

const isoDate = fc.date({ min: new Date('1990-01-01'), max: new Date('2100-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
const money = fc.tuple(fc.integer({ min: 0, max: 99999 }), fc.integer({ min: 0, max: 99 })).map(([a, b]) => `${a}.${String(b).padStart(2, '0')}`);

/** A value that follows the schema (roughly): enough to get past validation often. */
export function fromSchema(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return leaf;
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  for (const k of ['oneOf', 'anyOf'] as const) {
    if (Array.isArray(schema[k]) && schema[k].length) {
      const base = { ...schema };
      delete base[k];
      return fc.oneof(...schema[k].map((s: Schema) => fromSchema({ ...base, ...s }, depth + 1)));
    }
  }
  if (Array.isArray(schema.allOf)) return fromSchema(Object.assign({}, ...schema.allOf), depth + 1);
  const type = Array.isArray(schema.type) ? (schema.type.find((t: string) => t !== 'null') ?? 'null') : schema.type;
  switch (type) {
    case 'string':
      if (schema.format === 'uuid') return fc.uuid();
      if (schema.format === 'date') return isoDate;
      if (schema.format === 'date-time') return isoDate.map((d) => `${d}T10:00:00Z`);
      if (schema.format === 'email') return fc.emailAddress();
      if (schema.format === 'money' || /\\d\{1,12\}/.test(schema.pattern ?? '')) return money;
      return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 30, 30) });
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -10, max: Math.min(schema.maximum ?? 1000, (schema.minimum ?? 0) + 1000) });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(fromSchema(schema.items, depth + 1), { minLength: schema.minItems ?? 0, maxLength: Math.max(schema.minItems ?? 0, 3) });
    default: {
      const props: Record<string, Schema> = schema.properties ?? {};
      if (!Object.keys(props).length) return type === 'object' ? fc.constant({}) : leaf;
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, s] of Object.entries(props)) record[k] = fromSchema(s, depth + 1);
      return fc.record(record, { requiredKeys: (schema.required ?? []).filter((k: string) => k in props) });
    }
  }
}

/** Schema-shaped, then one field replaced by a hostile value, removed, or joined by an extra one. */
export function mutated(schema: Schema | undefined): fc.Arbitrary<unknown> {
  const keys = Object.keys(schema?.properties ?? {});
  return fc
    .tuple(fromSchema(schema), fc.constantFrom(...(keys.length ? keys : ['x'])), hostileValue, fc.constantFrom('replace', 'remove', 'extra', 'proto'))
    .map(([value, key, hostile, how]) => {
      if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
      const v = { ...(value as Record<string, unknown>) };
      if (how === 'replace') v[key] = hostile;
      else if (how === 'remove') delete v[key];
      else if (how === 'extra') v[`extra_${key}`] = hostile;
      else {
        // Prototype-ish keys as own properties, "__proto__" included (JSON.stringify writes an own,
        // enumerable "__proto__" property as a plain key).
        // biome-ignore lint/complexity/useLiteralKeys: v.constructor is typed as Function; this sets a plain own key
        v['constructor'] = { prototype: { polluted: 1 } };
        v.prototype = hostile;
        Object.defineProperty(v, '__proto__', { value: { polluted: hostile }, enumerable: true, configurable: true, writable: true });
      }
      return v;
    });
}

/** Text that is not (valid) JSON, sent with content-type application/json. */
export const brokenJson = fc.constantFrom(
  '{',
  '{"a":',
  "{'a':1}",
  '[1,2,',
  '{"a":NaN}',
  '{"a":1}}',
  '{"a":undefined}',
  '\u0000',
  'undefined',
  '"just a string"',
  '123',
  'true',
  'null',
  '[]',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '{"a":1,"a":2}',
  '\uFEFF{}',
  '{"a":1e999}',
  '',
);

export type FuzzBody = { kind: 'json'; value: unknown } | { kind: 'raw'; text: string; contentType: string };

export function bodyArbitrary(schema: Schema | undefined): fc.Arbitrary<FuzzBody> {
  const json = (a: fc.Arbitrary<unknown>) => a.map((value) => ({ kind: 'json' as const, value }));
  return fc.oneof(
    { weight: 3, arbitrary: json(fromSchema(schema)) },
    { weight: 4, arbitrary: json(mutated(schema)) },
    { weight: 2, arbitrary: json(hostileValue) },
    { weight: 2, arbitrary: brokenJson.map((text) => ({ kind: 'raw' as const, text, contentType: 'application/json' })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          hostileString,
          fc.constantFrom(
            'text/plain',
            'application/x-www-form-urlencoded',
            'multipart/form-data; boundary=x',
            'application/xml',
            'application/json; charset=utf-16',
          ),
        )
        .map(([text, contentType]) => ({ kind: 'raw' as const, text, contentType })),
    },
  );
}

/** Query strings: the schema's keys with schema-shaped or hostile values, repeated keys, extra keys. */
export function queryArbitrary(schema: Schema | undefined): fc.Arbitrary<string> {
  const keys = Object.keys(schema?.properties ?? {});
  const value = fc.oneof(
    hostileString.filter((s) => s.length < 5000),
    hostileNumber.map(String),
  );
  const pair = fc.tuple(fc.constantFrom(...keys, 'unknown', '__proto__', 'page[]', 'limit'), value);
  return fc.tuple(fc.array(pair, { maxLength: 5 }), fromSchema(schema)).map(([pairs, shaped]) => {
    const q = new URLSearchParams();
    if (shaped && typeof shaped === 'object' && !Array.isArray(shaped)) for (const [k, v] of Object.entries(shaped)) q.append(k, String(v));
    for (const [k, v] of pairs) q.append(k, v);
    return q.toString();
  });
}

/** Path parameter values: valid UUIDs (unknown resources), non-UUIDs, injections, odd text. */
export const pathValue = fc.oneof(
  fc.uuid(),
  // encodeURIComponent refuses lone surrogates; malformed escapes are sent raw in fuzz.test.ts.
  hostileString.filter((s) => s.length > 0 && s.length < 3000 && !/[\ud800-\udfff]/.test(s.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ''))),
  fc.constantFrom('00000000-0000-0000-0000-000000000000', 'not-a-uuid', '1', '-1', '%00', '..', '.', 'null', 'ZZZZZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZZZZZZZZZ'),
);
