import { routeRegistry, type RegisteredRoute } from './routing';
import { errorEnvelope } from './schemas/common';

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

function operation(route: RegisteredRoute, variant?: NonNullable<RegisteredRoute['docVariants']>[number]) {
  const responses: Record<string, object> = {};
  for (const [status, r] of Object.entries(route.responses)) {
    const code = Number(status);
    const isError = code >= 400;
    const contentType = r.contentType ?? 'application/json';
    const schema = r.schema ?? (isError ? errorEnvelope : undefined);
    responses[status] = {
      description: r.description,
      ...(code === 204 || code === 304 || (!schema && !r.contentType) ? {} : { content: { [contentType]: { schema: schema ? stripAjvOnly(schema) : {} } } }),
      ...(code === 429 || code === 503 ? { headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait' } } } : {}),
    };
  }
  const defaults = route.auth === 'public' ? [400, 429] : [400, 401, 403, 404, 429];
  for (const code of defaults) {
    responses[code] ??= { description: STANDARD_ERRORS[code], content: { 'application/json': { schema: errorEnvelope } } };
  }
  responses.default = { description: 'Unexpected error (INTERNAL_ERROR)', content: { 'application/json': { schema: errorEnvelope } } };

  const headers = [...(route.headers ?? []), ...(variant?.headers ?? [])].map((h) => ({
    name: h.name,
    in: 'header',
    required: h.required ?? false,
    description: h.description,
    schema: { type: 'string' },
  }));
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
    'x-roles': route.auth === 'public' ? [] : (['viewer', 'member', 'manager', 'admin'].slice(['viewer', 'member', 'manager', 'admin'].indexOf(route.auth))),
    ...(route.auth === 'public' ? { security: [] } : {}),
    parameters: [...parameters(route, variant?.params), ...headers],
    ...(body ? { requestBody: { required: true, content: { [body.contentType]: { schema: stripAjvOnly(body.schema) } } } } : {}),
    responses,
  };
}

const fill = (path: string, params: Record<string, string>) => path.replace(/:([A-Za-z_]+)/g, (m, n: string) => params[n] ?? m);

export function buildOpenApi(serverUrls: string[] = []): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
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
      description:
        'Accounting for businesses in Austria, Germany and the EU. Money is a decimal string with two places; ' +
        'dates are YYYY-MM-DD; errors use the envelope { error: { message, code, status, details } }. ' +
        'Send X-Request-Id to correlate logs; 429 and 503 answers carry Retry-After. ' +
        'POST endpoints that create money-relevant records accept an Idempotency-Key header.',
    },
    servers: serverUrls.map((url) => ({ url })),
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: { Error: errorEnvelope },
    },
    security: [{ bearerAuth: [] }],
    paths,
  };
}

/** Every mounted route (method + path) — used by the test that no route goes undocumented. */
export const documentedRoutes = () => routeRegistry.filter((r) => !r.undocumented).map((r) => `${r.method.toUpperCase()} ${r.fullPath}`);
