import type Router from '@koa/router';
import { routeRegistry, type RegisteredRoute, type ResponseSpec } from './routing';
import { METRICS_PATH } from './middleware/metrics';
import { errorEnvelope } from './schemas/common';
import { withRequiredFields } from './responseSchemas';

/**
 * The OpenAPI 3.1 document, generated from the same route declarations that validate requests
 * (api/routing.ts), so the documentation cannot drift from the behaviour. Roles, error envelope
 * and security come from each declaration.
 */
const ROLE_TEXT: Record<string, string> = {
  viewer: 'viewer, member, manager or admin',
  member: 'member, manager or admin',
  manager: 'manager or admin',
  admin: 'admin only',
};

const STANDARD_ERRORS: Record<number, string> = {
  400: 'Invalid input (INVALID_INPUT, MISSING_FIELD, INVALID_FORMAT, IMMUTABLE, DEPENDENCY)',
  401: 'Missing, invalid or expired access token (UNAUTHORIZED, TOKEN_EXPIRED)',
  403: 'Role does not permit the operation (FORBIDDEN) or plan limit (PLAN_LIMIT)',
  404: 'Not found or not accessible to the tenant (NOT_FOUND)',
  429: 'Rate limit exceeded (RATE_LIMITED); see Retry-After',
};

/** Every error answer has the one envelope: referenced, so generated clients get one Error type. */
const ERROR_REF = { $ref: '#/components/schemas/Error' };

const toOpenApiPath = (p: string) => p.replace(/:([A-Za-z_]+)/g, '{$1}');

function stripAjvOnly(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(stripAjvOnly);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'errorMessage' || k === 'coerce') continue;
    out[k] = stripAjvOnly(v);
  }
  return out;
}

function parameters(route: RegisteredRoute, fixed: Record<string, string> = {}) {
  const out: object[] = [];
  const params = route.params as { properties?: Record<string, object> } | undefined;
  for (const [name, schema] of Object.entries(params?.properties ?? {})) {
    if (name in fixed) continue;
    out.push({ name, in: 'path', required: true, schema: stripAjvOnly(schema) });
  }
  const query = route.query as { properties?: Record<string, object>; required?: string[] } | undefined;
  for (const [name, schema] of Object.entries(query?.properties ?? {})) {
    out.push({ name, in: 'query', required: query?.required?.includes(name) ?? false, schema: stripAjvOnly(schema) });
  }
  return out;
}

/** OpenAPI 3.1 describes a binary body (a PDF) by its media type alone; text bodies are strings. */
const isBinary = (type: string) => !/json|xml|csv|^text\//.test(type);

function mediaObject(type: string, schema: object | undefined): object {
  if (schema === errorEnvelope) return { schema: ERROR_REF };
  if (schema) return { schema: stripAjvOnly(schema) };
  return isBinary(type) ? {} : { schema: { type: 'string' } };
}

/** The content map of one response: every media type the route may answer with for that status. */
function responseContent(code: number, r: ResponseSpec): Record<string, object> | undefined {
  if (code === 204 || code === 304) return undefined;
  if (r.content)
    return Object.fromEntries(
      Object.entries(r.content).map(([type, m]) => [
        type,
        mediaObject(type, m.schema && m.schema !== errorEnvelope ? (withRequiredFields(m.schema) as object) : m.schema),
      ]),
    );
  const schema = r.schema && r.schema !== errorEnvelope ? (withRequiredFields(r.schema) as object) : (r.schema ?? (code >= 400 ? errorEnvelope : undefined));
  if (!schema && !r.contentType) return undefined;
  const type = r.contentType ?? 'application/json';
  return { [type]: mediaObject(type, schema) };
}

function operation(route: RegisteredRoute, variant?: NonNullable<RegisteredRoute['docVariants']>[number]) {
  const responses: Record<string, object> = {};
  for (const [status, r] of Object.entries(route.responses)) {
    const code = Number(status);
    const content = responseContent(code, r);
    responses[status] = {
      description: r.description,
      ...(content ? { content } : {}),
      ...(code === 429 || code === 503 ? { headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait' } } } : {}),
    };
  }
  // Single resources (GET …/:id) carry the weak ETag of api/middleware/etag.ts and answer a
  // matching If-None-Match with 304 and no body.
  const etagged = route.method === 'get' && route.fullPath.endsWith('/:id') && !!responses[200];
  if (etagged) {
    responses[200] = {
      ...responses[200],
      headers: { ETag: { schema: { type: 'string' }, description: 'Weak tag of the JSON (W/"…"); send it as If-None-Match' } },
    };
    responses[304] ??= { description: 'Not modified: the If-None-Match tag is current (no body)' };
  }
  // A JSON body sent as anything else is refused (api/app.ts) rather than read as no body; a body
  // in a Content-Encoding we do not decode is refused on every route that reads one
  // (api/middleware/contentEncoding.ts), the raw-body webhook route included.
  if (route.body && !route.rawBody)
    responses[415] ??= {
      description: 'The body is not sent as application/json, or its Content-Encoding is not exactly one of gzip, deflate, br (INVALID_INPUT)',
      content: { 'application/json': { schema: ERROR_REF } },
    };
  if (route.rawBody)
    responses[415] ??= {
      description: 'The body’s Content-Encoding is not exactly one of gzip, deflate, br (INVALID_INPUT)',
      content: { 'application/json': { schema: ERROR_REF } },
    };
  const defaults = route.auth === 'public' ? [400, 429] : [400, 401, 403, 404, 429];
  for (const code of defaults) {
    responses[code] ??= { description: STANDARD_ERRORS[code], content: { 'application/json': { schema: ERROR_REF } } };
  }
  responses.default = { description: 'Unexpected error (INTERNAL_ERROR)', content: { 'application/json': { schema: ERROR_REF } } };

  const ifNoneMatch = etagged ? [{ name: 'If-None-Match', description: 'The ETag of an earlier answer: 304 while it is current' }] : [];
  const headers = [...(route.headers ?? []), ...(variant?.headers ?? []), ...ifNoneMatch].map(
    (h: { name: string; description: string; required?: boolean }) => ({
      name: h.name,
      in: 'header',
      required: h.required ?? false,
      description: h.description,
      schema: { type: 'string' },
    }),
  );
  const roleLine = route.auth === 'public' ? 'Public: no bearer token.' : `Roles: ${ROLE_TEXT[route.auth]}.`;
  const body = variant?.requestBody ?? (route.body ? { contentType: 'application/json', schema: route.body } : undefined);
  return {
    tags: [route.tag],
    summary: variant?.summary ?? route.summary,
    description: [variant?.description ?? route.description, roleLine].filter(Boolean).join('\n\n'),
    operationId: `${route.method}${toOpenApiPath(variant ? fill(route.fullPath, variant.params) : route.fullPath)
      .replace(/[{}]/g, '')
      .split(/[/-]/)
      .filter(Boolean)
      .map((s) => s[0].toUpperCase() + s.slice(1))
      .join('')}`,
    'x-roles': route.auth === 'public' ? [] : ['viewer', 'member', 'manager', 'admin'].slice(['viewer', 'member', 'manager', 'admin'].indexOf(route.auth)),
    ...(route.auth === 'public' ? { security: [] } : {}),
    parameters: [...parameters(route, variant?.params), ...headers],
    ...(body ? { requestBody: { required: true, content: { [body.contentType]: { schema: stripAjvOnly(body.schema) } } } } : {}),
    ...(!body && route.rawBody && route.rawBodyDoc ? { requestBody: rawRequestBody(route.rawBodyDoc) } : {}),
    responses,
  };
}

/** The documented body of a route that reads its body itself (an upload as the body or as a form). */
function rawRequestBody(doc: NonNullable<RegisteredRoute['rawBodyDoc']>) {
  const content = Object.fromEntries(
    Object.entries(doc.content).map(([type, m]) => [
      type,
      { ...(m.schema ? { schema: stripAjvOnly(m.schema) } : {}), ...(m.encoding ? { encoding: m.encoding } : {}) },
    ]),
  );
  return { required: true, description: doc.description, content };
}

const fill = (path: string, params: Record<string, string>) => path.replace(/:([A-Za-z_]+)/g, (m, n: string) => params[n] ?? m);

const errorJson = (description: string) => ({ description, content: { 'application/json': { schema: ERROR_REF } } });

/**
 * GET /metrics is middleware (api/middleware/metrics.ts), not a declared route: it sits before
 * the routers so scrapes skip CORS, compression and rate limits. It is in the document because
 * it is served on the API port; its guard is the operators' METRICS_TOKEN, not a tenant role.
 */
const metricsOperation = {
  tags: ['Operations'],
  summary: 'Prometheus metrics of this API process (operators)',
  description:
    'Operators only, no tenant role opens it: send `Authorization: Bearer <METRICS_TOKEN>` (METRICS_TOKEN is required in production). ' +
    'In development, without METRICS_TOKEN, only loopback clients may scrape. Metric names: docs/operations.md.',
  operationId: 'getMetrics',
  'x-roles': [],
  security: [{ metricsToken: [] }],
  parameters: [],
  responses: {
    200: { description: 'Prometheus text exposition format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } },
    401: errorJson('Missing or wrong METRICS_TOKEN (UNAUTHORIZED)'),
    404: errorJson('No METRICS_TOKEN configured and the client is not on loopback (NOT_FOUND)'),
    default: errorJson('Unexpected error (INTERNAL_ERROR)'),
  },
};

export function buildOpenApi(serverUrls: string[] = []): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = { [METRICS_PATH]: { get: metricsOperation } };
  for (const route of routeRegistry) {
    if (route.undocumented) continue;
    const variants = route.docVariants?.length ? route.docVariants : [undefined];
    for (const v of variants) {
      const p = toOpenApiPath(v ? fill(route.fullPath, v.params) : route.fullPath);
      paths[p] ??= {};
      paths[p][route.method] = operation(route, v);
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Accounting service API',
      version: '1.0.0',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      description:
        'Accounting for businesses in Austria, Germany and the EU. Money is a decimal string with two places; ' +
        'dates are YYYY-MM-DD; errors use the envelope { error: { message, code, status, details } }, with at most 20 details ' +
        '(detailsOmitted counts the rest; detailsIncomplete: input over 2,000 values is checked up to its first problem). ' +
        'A request body may be compressed with one Content-Encoding of gzip, deflate or br (the body limit counts decoded bytes); ' +
        'bytes that do not decode are 400, any other encoding 415. ' +
        'Send X-Request-Id to correlate logs; 429 and 503 answers carry Retry-After. ' +
        'POST endpoints that create money-relevant records accept an Idempotency-Key header.',
    },
    // Without PUBLIC_BASE_URL the document is relative to where it is served (OpenAPI allows '/').
    servers: serverUrls.length ? serverUrls.map((url) => ({ url })) : [{ url: '/' }],
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT or API key',
          description:
            'An access token (JWT, 15 minutes, from POST /api/auth/login) or an API key (ak_live_…, from POST /api/api-keys), which acts with its role but never reaches /api/users, /api/api-keys or /api/auth (403)',
        },
        metricsToken: { type: 'http', scheme: 'bearer', description: "The deployment's METRICS_TOKEN (operators and scrapers), not a user token" },
      },
      schemas: { Error: errorEnvelope },
    },
    security: [{ bearerAuth: [] }],
    paths,
  };
}

export interface MountedRoute {
  method: string;
  /** Koa path with :params. */
  path: string;
}

/**
 * Routes served outside the routers that belong in the document. /admin/queues is not one: it is
 * Bull Board's own UI and internal JSON API (versioned by the package, behind operator Basic
 * auth), documented in docs/operations.md instead of promised to API clients.
 */
export const MIDDLEWARE_ROUTES: MountedRoute[] = [{ method: 'GET', path: METRICS_PATH }];

/** What the routers really serve (HEAD comes with every GET and is not an operation of its own). */
export function mountedRoutes(routers: Router[]): MountedRoute[] {
  return routers.flatMap((router) =>
    router.stack.flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((method) => ({ method, path: String(layer.path) }))),
  );
}

/**
 * The mounted routes without an operation in `doc`, matched exactly on method and path
 * (`:id` ↔ `{id}`): a route is never covered by a longer path that starts like it. A route
 * declared with docVariants needs every variant; only `undocumented: true` leaves one out.
 */
export function missingOperations(
  doc: { paths: Record<string, Record<string, unknown> | undefined> },
  mounted: MountedRoute[],
  registry: RegisteredRoute[] = routeRegistry,
): string[] {
  const missing: string[] = [];
  for (const { method, path } of mounted) {
    const m = method.toLowerCase();
    const declared = registry.find((r) => r.method === m && r.fullPath === path);
    if (declared?.undocumented) continue;
    const expected = declared?.docVariants?.length ? declared.docVariants.map((v) => toOpenApiPath(fill(path, v.params))) : [toOpenApiPath(path)];
    for (const p of expected) if (!doc.paths[p]?.[m]) missing.push(`${method.toUpperCase()} ${p}`);
  }
  return missing;
}
