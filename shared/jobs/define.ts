import type { JobsOptions } from 'bullmq';
import type { JSONSchemaType, ValidateFunction } from 'ajv';
import { bodyAjv } from '../validation';

/**
 * A job's payload schema, carrying the payload type it was checked against: built only by
 * payloadSchema() or oneOfSchemas(), whose arguments ajv's JSONSchemaType<T> types, so a schema
 * that does not describe its type (a missing required key, a wrong type, an optional key not
 * marked nullable) does not compile.
 */
declare const payloadType: unique symbol;
export type PayloadSchema<P> = Record<string, unknown> & { readonly [payloadType]?: P };

export const payloadSchema = <P>(schema: JSONSchemaType<P>): PayloadSchema<P> => schema as unknown as PayloadSchema<P>;

/** A union payload (e.g. one per report kind): each member checked on its own, the data must match exactly one. */
export const oneOfSchemas = <A, B>(a: JSONSchemaType<A>, b: JSONSchemaType<B>): PayloadSchema<A | B> => ({ oneOf: [a, b] }) as unknown as PayloadSchema<A | B>;

/**
 * One job of the catalog (shared/jobs/catalog.ts): where it runs, what it carries, under which id.
 * Pure data: no handler (the worker maps each entry to one, workers/registry.ts).
 */
export interface JobDefinition<P, Q extends string = string> {
  readonly queue: Q;
  /** The BullMQ job name: unique within its queue, and what the outbox rows and Redis hold. */
  readonly name: string;
  /** The payload's JSON schema; a job whose data fails it is failed for good before its handler runs. */
  readonly schema: PayloadSchema<P>;
  /**
   * The job id, from the payload's business keys: adding a job whose id exists is a no-op in
   * BullMQ, so a retried request, a relayed row or a recovery re-queue never makes a second job.
   * Absent for jobs only a scheduler adds (their ids are the scheduler's).
   */
  readonly jobId?: (payload: P) => string;
  /** Options where this job differs from its queue's defaults (shared/queues.ts, QUEUE_JOB_OPTIONS). */
  readonly options?: JobsOptions;
}

/** A definition that names its jobs by business key (every job a producer adds). */
export type KeyedJobDefinition<P, Q extends string = string> = JobDefinition<P, Q> & { readonly jobId: (payload: P) => string };

// biome-ignore lint/suspicious/noExplicitAny: any payload: the catalog's entries, whatever they carry
export type AnyJobDefinition = JobDefinition<any>;

export type PayloadOf<D> = D extends JobDefinition<infer P> ? P : never;

/**
 * Declare a job with its payload type: `defineJob<Payload>()({ queue, name, schema, jobId })`.
 * The entry keeps its literal queue (the worker's handler maps are checked per queue) and whether
 * it has a jobId (producers may add only jobs that name their ids).
 */
export const defineJob =
  <P extends object>() =>
  <const D extends JobDefinition<P>>(def: D): D & JobDefinition<P, D['queue']> =>
    def;

/** The options a job is added with: its own (over the queue's defaults) and its id. */
export function addOptions<P>(def: JobDefinition<P>, payload: P): JobsOptions {
  return { ...def.options, ...(def.jobId ? { jobId: def.jobId(payload) } : {}) };
}

const compiled = new WeakMap<object, ValidateFunction>();

/**
 * Why data is not a valid payload of the job (ajv's message, e.g. "payload must have required
 * property 'tenantId'"), or null when it is. The API's ajv instance (shared/validation.ts): strict
 * about types, no coercion.
 */
export function payloadError(def: AnyJobDefinition, data: unknown): string | null {
  let fn = compiled.get(def.schema);
  if (!fn) {
    fn = bodyAjv.compile(def.schema);
    compiled.set(def.schema, fn);
  }
  return fn(data) ? null : bodyAjv.errorsText(fn.errors, { dataVar: 'payload' });
}
