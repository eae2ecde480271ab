import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { AppError, invalidInput, MAX_DETAILS, type ErrorDetail } from './errors';
import { pathOfNul } from './storable';

/**
 * One ajv instance for the service. Body schemas are strict (additionalProperties: false: unknown
 * fields are 400 INVALID_INPUT; docs/architecture.md, "A new endpoint"), query schemas coerce strings to numbers. The same schemas feed the
 * OpenAPI document (api/openapi.ts), so documentation cannot drift from validation.
 */
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

function makeAjv(coerce: boolean, allErrors = true, useDefaults = true): Ajv {
  // verbose: errors carry their parentSchema, so a schema's own errorMessage can be used (messageOf).
  const ajv = new Ajv({ allErrors, strict: false, coerceTypes: coerce, useDefaults, removeAdditional: false, verbose: true });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  ajv.addFormat('decimal', /^-?\d{1,12}(\.\d{1,4})?$/);
  ajv.addFormat('money', /^-?\d{1,12}(\.\d{1,2})?$/);
  return ajv;
}

export const bodyAjv = makeAjv(false);
export const queryAjv = makeAjv(true);
/** Checks answers against their documented schemas in the test suite (api/responseSchemas.ts): it must not fill in defaults. */
export const responseAjv = makeAjv(false, true, false);
/**
 * The same schemas, stopping at the first problem: allErrors costs work and an error object per
 * value, so input with more than MAX_VALUES_FOR_ALL_ERRORS values is validated fail-fast
 * (docs/resilience.md, "Hostile input"). Small bad input still gets every problem.
 */
const bodyAjvFirst = makeAjv(false, false);
const queryAjvFirst = makeAjv(true, false);
export const MAX_VALUES_FOR_ALL_ERRORS = 2000;
/** A field path in a detail is cut here: a 100 KB unknown key is not echoed back. */
const MAX_FIELD_LENGTH = 200;

const cache = new WeakMap<object, { all: ValidateFunction; first?: ValidateFunction }>();

/** Whether data holds more than `limit` values (objects, arrays, scalars); stops counting there. */
export function hasMoreValuesThan(data: unknown, limit: number): boolean {
  const stack: unknown[] = [data];
  let count = 1;
  while (stack.length) {
    const v = stack.pop();
    if (!v || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      count += v.length;
      if (count > limit) return true;
      for (const x of v) stack.push(x);
    } else {
      // for…in with a break, not Object.values: on an object with 80,000 keys that builds (and
      // then walks) an 80,000-value array, ~15× slower than stopping at the limit.
      const obj = v as Record<string, unknown>;
      for (const k in obj) {
        if (++count > limit) return true;
        stack.push(obj[k]);
      }
    }
  }
  return count > limit;
}

const clip = (field: string) => (field.length > MAX_FIELD_LENGTH ? `${field.slice(0, MAX_FIELD_LENGTH)}…` : field);

function fieldOf(e: ErrorObject): string {
  const base = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (e.keyword === 'required') return clip([base, (e.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.'));
  if (e.keyword === 'additionalProperties') return clip([base, (e.params as { additionalProperty: string }).additionalProperty].filter(Boolean).join('.'));
  return clip(base || '(root)');
}

function messageOf(e: ErrorObject): string {
  // A schema may say in words what its pattern means (`errorMessage`, stripped from OpenAPI):
  // "must match pattern ^(?:…)$" tells a client nothing.
  const custom = (e.parentSchema as { errorMessage?: unknown } | undefined)?.errorMessage;
  if (typeof custom === 'string' && e.keyword !== 'required' && e.keyword !== 'additionalProperties') return custom;
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not an allowed property';
    case 'enum':
      return `must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    case 'format':
      return `must be a valid ${(e.params as { format: string }).format}`;
    default:
      return e.message ?? 'is invalid';
  }
}

export function toDetails(errors: ErrorObject[] | null | undefined): ErrorDetail[] {
  const seen = new Set<string>();
  const out: ErrorDetail[] = [];
  for (const e of errors ?? []) {
    // anyOf/oneOf wrappers repeat what their branches said; keep the specific messages.
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if') continue;
    const d = { field: fieldOf(e), message: messageOf(e) };
    const k = `${d.field}|${d.message}`;
    if (!seen.has(k)) {
      seen.add(k);
      out.push(d);
    }
  }
  return out;
}

/** The fields of a message, at most MAX_DETAILS of them (the rest counted). */
function listFields(details: ErrorDetail[]): string {
  const shown = details.slice(0, MAX_DETAILS).map((d) => d.field);
  return details.length > MAX_DETAILS ? `${shown.join(', ')} and ${details.length - MAX_DETAILS} more` : shown.join(', ');
}

/** Validate data against a JSON schema, throwing 400 INVALID_INPUT (or MISSING_FIELD) with details. */
export function validate<T>(schema: object, data: unknown, opts: { query?: boolean; what?: string } = {}): T {
  let fns = cache.get(schema);
  if (!fns) {
    fns = { all: (opts.query ? queryAjv : bodyAjv).compile(schema) };
    cache.set(schema, fns);
  }
  // Decided before validating: useDefaults/coerceTypes change the data, so it is validated once.
  const large = hasMoreValuesThan(data, MAX_VALUES_FOR_ALL_ERRORS);
  if (large) fns.first ??= (opts.query ? queryAjvFirst : bodyAjvFirst).compile(schema);
  const fn = (large ? fns.first : fns.all) as ValidateFunction;
  if (!fn(data)) {
    const details = toDetails(fn.errors);
    // Large input stopped at its first problem: say that the list is not complete.
    const extra = large ? { detailsIncomplete: true } : undefined;
    const onlyMissing = fn.errors?.every((e) => e.keyword === 'required');
    if (onlyMissing && details.length) {
      throw new AppError('MISSING_FIELD', 400, `Missing required field: ${listFields(details)}`, details, undefined, extra);
    }
    throw new AppError('INVALID_INPUT', 400, `${opts.what ?? 'Request'} failed validation`, details, undefined, extra);
  }
  // Schemas do not say it for every string: the database cannot store U+0000 (shared/storable.ts).
  const nulAt = pathOfNul(data);
  if (nulAt) throw invalidInput(`${opts.what ?? 'Request'} failed validation`, [{ field: nulAt, message: 'must not contain the NUL character (U+0000)' }]);
  return data as T;
}
