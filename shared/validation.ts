import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { AppError, invalidInput, type ErrorDetail } from './errors';
import { pathOfNul } from './nulCharacter';

/**
 * One ajv instance for the service. Body schemas are strict (additionalProperties: false is the
 * rule — decisions.md), query schemas coerce strings to numbers. The same schemas feed the
 * OpenAPI document (api/openapi.ts), so documentation cannot drift from validation.
 */
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

function makeAjv(coerce: boolean): Ajv {
  // verbose: errors carry their parentSchema, so a schema's own errorMessage can be used (messageOf).
  const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: coerce, useDefaults: true, removeAdditional: false, verbose: true });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  ajv.addFormat('decimal', /^-?\d{1,12}(\.\d{1,4})?$/);
  ajv.addFormat('money', /^-?\d{1,12}(\.\d{1,2})?$/);
  return ajv;
}

export const bodyAjv = makeAjv(false);
export const queryAjv = makeAjv(true);

const cache = new WeakMap<object, ValidateFunction>();

function fieldOf(e: ErrorObject): string {
  const base = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (e.keyword === 'required') return [base, (e.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.');
  if (e.keyword === 'additionalProperties') return [base, (e.params as { additionalProperty: string }).additionalProperty].filter(Boolean).join('.');
  return base || '(root)';
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

/** Validate data against a JSON schema, throwing 400 INVALID_INPUT (or MISSING_FIELD) with details. */
export function validate<T>(schema: object, data: unknown, opts: { query?: boolean; what?: string } = {}): T {
  let fn = cache.get(schema);
  if (!fn) {
    fn = (opts.query ? queryAjv : bodyAjv).compile(schema);
    cache.set(schema, fn);
  }
  if (!fn(data)) {
    const details = toDetails(fn.errors);
    const onlyMissing = fn.errors?.every((e) => e.keyword === 'required');
    if (onlyMissing && details.length) {
      throw new AppError('MISSING_FIELD', 400, `Missing required field: ${details.map((d) => d.field).join(', ')}`, details);
    }
    throw invalidInput(`${opts.what ?? 'Request'} failed validation`, details);
  }
  // Schemas do not say it for every string: the database cannot store U+0000 (shared/nulCharacter.ts).
  const nulAt = pathOfNul(data);
  if (nulAt) throw invalidInput(`${opts.what ?? 'Request'} failed validation`, [{ field: nulAt, message: 'must not contain the NUL character (U+0000)' }]);
  return data as T;
}
