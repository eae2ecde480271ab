import { createHash, randomUUID } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import { Model, knexSnakeCaseMappers } from 'objection';
import pg from 'pg';
import path from 'node:path';
import { config } from './config';
import { projectRoot } from './projectRoot';

// DATE columns stay 'YYYY-MM-DD' strings: turning them into JS Dates would shift them by the
// server's time zone. numeric stays a string (pg's default), which is what decimal.js wants.
pg.types.setTypeParser(pg.types.builtins.DATE, (v: string) => v);
// count(*) is int8; our counts fit a JS number comfortably.
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));

export const migrationsDir = path.join(projectRoot, 'migrations');

export type Trx = Knex.Transaction;
export type Db = Knex | Knex.Transaction;

/**
 * Who opened a connection, as pg_stat_activity shows it: the entry script, relative to the project
 * (`accounting:api/server.ts`, `accounting:workers/index.ts`; BullMQ's sandbox runner for
 * rendering jobs), so an operator — and the webhook benchmark's CPU split — can tell the API's
 * backends from the workers'. PostgreSQL keeps 63 bytes of it.
 */
export const applicationName = (): string => {
  const entry = process.argv[1];
  const program = entry ? path.relative(projectRoot, entry) : process.title;
  return `accounting:${program}`.slice(0, 63);
};

export function createKnex(databaseUrl: string, poolMax: number, opts: { camelCase?: boolean } = {}): Knex {
  return knexFactory({
    client: 'pg',
    connection: {
      connectionString: databaseUrl,
      // A request never waits forever on the database: queries are bounded server- and client-side.
      statement_timeout: 30_000,
      query_timeout: 35_000,
      connectionTimeoutMillis: 5_000,
      application_name: applicationName(),
    } as Knex.PgConnectionConfig,
    pool: { min: 0, max: poolMax },
    acquireConnectionTimeout: 10_000,
    ...(opts.camelCase === false ? {} : knexSnakeCaseMappers()),
  });
}

const mappers = knexSnakeCaseMappers();

/** Whether `db` is a transaction (its statements commit together) rather than the pool. */
export const isTransaction = (db: Db): db is Knex.Transaction => Boolean((db as { isTransaction?: boolean }).isTransaction);

/** Whether a value is SQL (knex.raw, knex.fn.now(), a subquery) rather than data. */
export const isKnexSql = (v: unknown): v is Knex.Raw | Knex.QueryBuilder => typeof (v as { toSQL?: unknown } | null)?.toSQL === 'function';

/** The SQL column name of a camelCase name in code, by the same mapping every knex query uses. */
export const columnName = (name: string): string => (mappers.wrapIdentifier as (value: string, origWrap: (v: string) => string) => string)(name, (v) => v);

/** A row PostgreSQL built as JSON (row_to_json) with the camelCase keys every knex row has. */
export const camelCaseKeys = <T = Record<string, unknown>>(row: Record<string, unknown>): T =>
  (mappers.postProcessResponse as (r: unknown) => unknown)(row) as T;

/**
 * Run a hot, complex read as a named (prepared) statement: PostgreSQL then plans it once per
 * connection instead of on every call (for the single-invoice read, planning took 2 ms of the
 * 2.5 ms). Rows get the same snake_case → camelCase mapping as every knex query. If a migration
 * changed a table the statement reads (`cached plan must not change result type`), the call is
 * answered unprepared, so a deploy never breaks reads on connections opened before it.
 */
export async function queryPrepared<T = Record<string, unknown>>(knex: Db, name: string, native: { sql: string; bindings: readonly unknown[] }): Promise<T[]> {
  // A transaction's client hands out the transaction's own connection.
  const client = knex.client as {
    acquireConnection(): Promise<pg.ClientBase>;
    releaseConnection(c: pg.ClientBase): Promise<void>;
    emit(event: string, ...args: unknown[]): boolean;
  };
  const conn = await client.acquireConnection();
  // knex's own 'query' / 'query-response' events, so listeners (debug logging, the statement
  // counter in test/bench) see prepared statements like any other.
  const event = { sql: native.sql, bindings: native.bindings, __knexQueryUid: randomUUID(), method: 'raw' };
  client.emit('query', event);
  try {
    let res: pg.QueryResult;
    try {
      res = await conn.query({ name, text: native.sql, values: native.bindings as unknown[] });
      client.emit('query-response', res, event);
    } catch (err) {
      client.emit('query-error', err, event);
      // In a transaction the failed statement has aborted it: no second try there (the caller's
      // retry starts a new one). Statements prepared inside transactions name their columns, so
      // a migration that adds columns does not change their result type.
      if ((err as { code?: string }).code !== '0A000' || isTransaction(knex)) throw err;
      res = await conn.query(native.sql, native.bindings as unknown[]);
    }
    return (mappers.postProcessResponse as (rows: unknown) => unknown)(res.rows) as T[];
  } finally {
    await client.releaseConnection(conn);
  }
}

/** Stands in for argument i while runCompiled's build() runs. */
const argMark = (i: number) => `\u0000arg:${i}\u0000`;

interface CompiledStatement {
  name: string;
  sql: string;
  /** Per binding position: the argument it takes, or a value fixed in the builder. */
  slots: Array<{ arg: number } | { value: unknown }>;
}
const compiledStatements = new Map<string, CompiledStatement>();

/**
 * Run a hot statement built with knex once per process: the first call for `key` compiles build()
 * with placeholders, later calls bind `args` to the prepared text (docs/benchmarks.md, "Hot
 * statements compiled once"). So build() must bind every argument unchanged (slicing or
 * stringifying one throws) and never branch on one; shape-deciding values belong in `key`.
 */
export async function runCompiled<T = Record<string, unknown>>(
  db: Db,
  key: string,
  args: readonly unknown[],
  build: (...marks: string[]) => Knex.QueryBuilder | Knex.Raw,
): Promise<T[]> {
  let c = compiledStatements.get(key);
  if (!c) {
    const native = build(...args.map((_, i) => argMark(i)))
      .toSQL()
      .toNative();
    // PostgreSQL text cannot hold NUL, so a NUL in a binding is (part of) a placeholder.
    const slots = native.bindings.map((b): CompiledStatement['slots'][number] => {
      if (typeof b !== 'string' || !b.includes('\u0000')) return { value: b };
      // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL marks the placeholder; no real argument contains it
      const m = /^\u0000arg:(\d+)\u0000$/.exec(b);
      if (!m) throw new Error(`compiled statement ${key}: an argument was changed before binding (${JSON.stringify(b)})`);
      return { arg: Number(m[1]) };
    });
    const unbound = args.findIndex((_, i) => !slots.some((s) => 'arg' in s && s.arg === i));
    if (unbound >= 0) throw new Error(`compiled statement ${key}: argument ${unbound} is not bound as it is`);
    c = { name: `c-${createHash('sha256').update(native.sql).digest('base64url').slice(0, 24)}`, sql: native.sql, slots };
    if (compiledStatements.size >= 1_000) compiledStatements.clear();
    compiledStatements.set(key, c);
  }
  const bindings = c.slots.map((s) => ('arg' in s ? args[s.arg] : s.value));
  return queryPrepared<T>(db, c.name, { sql: c.sql, bindings });
}

/**
 * runCompiled for a plain SQL text with `?` placeholders and a value for each: the text is the
 * key, so its texts are compiled once each (a caller may have a few, e.g. one per event shape).
 */
export function runCompiledSql<T = Record<string, unknown>>(db: Db, sql: string, bindings: readonly unknown[]): Promise<T[]> {
  return runCompiled<T>(db, sql, bindings, (...marks) => db.raw(sql, marks));
}

let instance: Knex | null = null;

/** The process-wide knex (camelCase in code, snake_case in SQL), bound to objection models. */
export function db(): Knex {
  if (!instance) {
    instance = createKnex(config().databaseUrl, config().databasePoolMax);
    Model.knex(instance);
  }
  return instance;
}

export async function closeDb(): Promise<void> {
  if (instance) {
    const k = instance;
    instance = null;
    await k.destroy();
  }
}

/** Apply all pending migrations with a knex that has no identifier mappers (plain SQL names). */
export async function migrateLatest(databaseUrl: string): Promise<string[]> {
  const k = createKnex(databaseUrl, 2, { camelCase: false });
  try {
    const [, applied] = await k.migrate.latest({ directory: migrationsDir, loadExtensions: ['.ts'] });
    return applied as string[];
  } finally {
    await k.destroy();
  }
}
