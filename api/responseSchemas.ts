import { appendFileSync } from 'node:fs';
import type { ValidateFunction } from 'ajv';
import { responseAjv } from '../shared/validation';

/**
 * Response schemas as the OpenAPI document states them (docs/openapi.md): every property of an
 * object is `required` (always present, possibly null) unless the schema names it in
 * `x-optional` (present only sometimes). A schema that lists its own `required` keeps it. Written
 * once here so the generated client types match what the API sends; the test suite checks every
 * JSON answer against the result (RESPONSE_SCHEMA_LOG below), so the promise is kept.
 */
export function withRequiredFields(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withRequiredFields);
  if (!schema || typeof schema !== 'object') return schema;
  const src = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(src)) {
    if (k === 'x-optional') continue;
    // `properties` maps names to schemas: recurse into each value, never treat a name as a keyword.
    out[k] = k === 'properties' && v && typeof v === 'object' ? mapValues(v as Record<string, unknown>, withRequiredFields) : withRequiredFields(v);
  }
  const props = src.properties as Record<string, unknown> | undefined;
  if (props && typeof props === 'object' && !Array.isArray(props) && src.required === undefined) {
    const optional = new Set((src['x-optional'] as string[] | undefined) ?? []);
    const required = Object.keys(props).filter((n) => !optional.has(n));
    if (required.length) out.required = required;
  }
  return out;
}

const mapValues = (o: Record<string, unknown>, f: (v: unknown) => unknown) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));

const compiled = new WeakMap<object, ValidateFunction>();

/**
 * Test-suite check that an answer matches its documented schema (set RESPONSE_SCHEMA_LOG to a
 * file: scripts/test.ts does). A mismatch is appended there as one JSON line and the test run
 * fails at its end; production never sets it, so this costs nothing there.
 */
/** Read once: process.env is a lookup per access, and this runs on every answer. */
const RESPONSE_SCHEMA_LOG = process.env.RESPONSE_SCHEMA_LOG;

export function checkResponse(route: string, status: number, schema: object | undefined, body: unknown): void {
  const log = RESPONSE_SCHEMA_LOG;
  if (!log || body === undefined || body === null || typeof body !== 'object' || Buffer.isBuffer(body)) return;
  if (typeof (body as { pipe?: unknown }).pipe === 'function') return;
  if (!schema) {
    if (status < 200 || status > 299) return;
    appendFileSync(log, `${JSON.stringify({ route, status, errors: ['a JSON answer with no documented schema for this status'] })}\n`);
    return;
  }
  let validateFn = compiled.get(schema);
  if (!validateFn) {
    validateFn = responseAjv.compile(withRequiredFields(schema) as object);
    compiled.set(schema, validateFn);
  }
  if (validateFn(body)) return;
  const errors = (validateFn.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message}`);
  appendFileSync(log, `${JSON.stringify({ route, status, errors })}\n`);
}
