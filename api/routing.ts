import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { authenticateAs } from './middleware/authenticate';
import { validate } from '../shared/validation';
import { AppError } from '../shared/errors';
import type { Actor, Role } from '../shared/actor';
import type { Limiters } from './middleware/rateLimit';
import type { Config } from '../shared/config';
import { checkResponse } from './responseSchemas';

/**
 * Routes are declared, not just registered: each declaration carries its role, its JSON schemas
 * and its documented responses. The same declaration validates requests and generates the
 * OpenAPI document (api/openapi.ts), and a test checks that every mounted route is documented.
 */
export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** One representation of a response. A non-JSON body (pdf, xml, csv) may leave out the schema. */
export interface MediaSpec {
  schema?: object;
}

/**
 * A documented response. Most answer JSON only: `schema` (and `contentType` for a single other
 * media type, e.g. text/html). A route that serves several representations of the same status
 * (json, pdf or xml by ?format or Accept) declares them all in `content`, so clients see every
 * media type they may receive; the two forms do not mix.
 */
export type ResponseSpec = { description: string } & (
  | { schema?: object /** Defaults to application/json. */; contentType?: string; content?: never }
  | { content: Record<string, MediaSpec>; schema?: never; contentType?: never }
);

export interface RouteSpec<B = unknown, Q = Record<string, string>, P = Record<string, string>> {
  method: Method;
  path: string;
  summary: string;
  description?: string;
  /** Lowest role allowed; 'public' needs no token (login, webhooks). */
  auth: Role | 'public';
  body?: object;
  /**
   * The handler reads the raw bytes itself (signature checks over the exact body), so the body is
   * not validated here. Other POST/PUT/PATCH routes without a `body` schema take no body at all.
   */
  rawBody?: true;
  /** Documentation only: the request body a rawBody route reads, by media type (OpenAPI requestBody). */
  rawBodyDoc?: { description: string; content: Record<string, MediaSpec & { encoding?: Record<string, { contentType: string }> }> };
  query?: object;
  params?: object;
  responses: Record<number, ResponseSpec>;
  /** Extra middleware run after auth and before validation (rate limits, plan gates, raw body). */
  before?: Middleware[];
  /** Request headers worth documenting (Idempotency-Key, provider signature headers). */
  headers?: { name: string; description: string; required?: boolean }[];
  /**
   * Documentation only: one OpenAPI operation per fixed value of a path parameter, e.g. the
   * inbound webhook path once per provider with that provider's signature headers.
   */
  docVariants?: {
    params: Record<string, string>;
    summary: string;
    description?: string;
    headers?: RouteSpec['headers'];
    requestBody?: { contentType: string; schema: object };
  }[];
  /** Leave the route out of the OpenAPI document (its static assets, for instance). */
  undocumented?: boolean;
  handler: (ctx: AppContext<B, Q, P>) => Promise<void> | void;
}

export interface AppContext<B = unknown, Q = Record<string, string>, P = Record<string, string>> extends Context {
  state: Context['state'] & { actor: Actor; requestId: string };
  body: unknown;
  input: { body: B; query: Q; params: P };
  limiters: Limiters;
  config: Config;
}

export interface RegisteredRoute extends RouteSpec {
  fullPath: string;
  tag: string;
}

export const routeRegistry: RegisteredRoute[] = [];

const uuidSchema = { type: 'string', format: 'uuid' };

/**
 * The body of an action that takes none (cancel, convert, logout, …): empty or {}. Anything else
 * is a client sending fields it believes matter, and silently ignoring them is how a typo in a
 * field name goes unnoticed (unknown properties are 400 INVALID_INPUT; docs/architecture.md, "A new endpoint").
 */
const NO_BODY = { type: 'object', additionalProperties: false, properties: {} };
const TAKES_BODY = new Set(['post', 'put', 'patch']);

/** Path params named id or *Id must be UUIDs: a malformed id is a 400, never a database error. */
function defaultParamsSchema(path: string): object | undefined {
  const names = [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]);
  if (!names.length) return undefined;
  const properties: Record<string, object> = {};
  for (const n of names) properties[n] = n === 'id' || n.endsWith('Id') ? uuidSchema : { type: 'string', minLength: 1, maxLength: 200 };
  return { type: 'object', properties, required: names };
}

export function createRouter(prefix: string, tag: string) {
  // Case-sensitive (RFC 3986: a path is): each route has exactly one spelling, so the policies
  // that look at the path before routing (general rate limit, raw-body paths, log masking, Bull
  // Board, metrics) cannot be stepped around with /API/… (they were, while routes matched any case).
  const router = new Router({ prefix, sensitive: true });
  const add = <B = unknown, Q = Record<string, string>, P = Record<string, string>>(spec: RouteSpec<B, Q, P>) => {
    const params = spec.params ?? defaultParamsSchema(spec.path);
    const body = spec.body ?? (TAKES_BODY.has(spec.method) && !spec.rawBody ? NO_BODY : undefined);
    const fullPath = prefix + (spec.path === '/' ? '' : spec.path);
    routeRegistry.push({ ...(spec as RouteSpec), params, fullPath, tag });
    const chain: Middleware[] = [];
    if (spec.auth !== 'public') chain.push(authenticateAs(spec.auth));
    chain.push(...(spec.before ?? []));
    // Validation and the handler in one layer (one async layer less per request).
    chain.push(async (ctx) => {
      const c = ctx as unknown as AppContext;
      // The parser reads JSON only (api/app.ts); any other body would be ignored and the route
      // would answer as if none had been sent ("name is required" for name=Form). Checked here,
      // on a route that takes a JSON body, so an unknown path stays 404 whatever it carries; a
      // body-less POST (…/cancel) may carry any content type: only a body that is there counts.
      if (body && sendsBody(ctx) && !ctx.is('application/json', '+json')) {
        throw new AppError('INVALID_INPUT', 415, `Unsupported content type ${ctx.get('Content-Type') || '(none)'}; send the body as application/json`);
      }
      c.input = {
        params: params ? validate(params, { ...ctx.params }, { what: 'Path' }) : {},
        query: spec.query ? validate(spec.query, { ...ctx.query }, { query: true, what: 'Query' }) : {},
        body: body ? validate(body, bodyOf(ctx), { what: 'Body' }) : undefined,
      } as AppContext['input'];
      await spec.handler(ctx as unknown as AppContext<B, Q, P>);
      const documented = spec.responses[ctx.status];
      checkResponse(`${spec.method.toUpperCase()} ${fullPath}`, ctx.status, documented?.schema ?? documented?.content?.['application/json']?.schema, ctx.body);
    });
    router[spec.method](spec.path, ...chain);
  };
  return { router, add };
}

/** A request with body bytes: a non-zero Content-Length, or a chunked body. */
const sendsBody = (ctx: Context) => Number(ctx.get('Content-Length') || 0) > 0 || !!ctx.get('Transfer-Encoding');

function bodyOf(ctx: Context): unknown {
  const b = (ctx.request as unknown as { body?: unknown }).body;
  // koa-body yields {} for an empty body; a missing JSON body is validated as an empty object.
  return b === undefined || b === null ? {} : b;
}
