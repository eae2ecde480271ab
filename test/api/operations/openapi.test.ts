import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { routers } from '../../../api/routes';
import { buildOpenApi, MIDDLEWARE_ROUTES, missingOperations, mountedRoutes } from '../../../api/openapi';
import type { RegisteredRoute } from '../../../api/routing';
import { createDraftInvoice, createSentInvoice } from '../../helpers/invoiceFactory';

let server: Awaited<ReturnType<typeof startTestServer>>;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

/** Everything the API serves: the routers' routes plus middleware routes such as /metrics. */
const allMounted = () => [...mountedRoutes(routers), ...MIDDLEWARE_ROUTES];

it('every mounted route has an operation in /api/openapi.json, with roles and the error envelope', async () => {
  const res = await client(server.url).get('/api/openapi.json');
  expect(res.status).toBe(200);
  const doc = res.body;
  expect(doc.openapi).toBe('3.1.0');
  expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });

  const mounted = allMounted();
  expect(mounted.length).toBeGreaterThan(50);
  expect(missingOperations(doc, mounted)).toEqual([]);

  // The inbound webhook endpoint is documented per provider with its signature headers.
  for (const provider of ['stripe', 'paypal', 'mollie', 'bank']) {
    const op = doc.paths[`/api/payment-import/${provider}/{token}`]?.post;
    expect(op, provider).toBeDefined();
    expect(op.parameters.map((p: any) => p.name)).toContain('token');
  }
  expect(doc.paths['/api/payment-import/stripe/{token}'].post.parameters.map((p: any) => p.name)).toContain('Stripe-Signature');

  for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      expect(op.summary, `${method} ${path} summary`).toBeTruthy();
      expect(op.responses.default.content['application/json'].schema).toBeDefined();
      if (op.security?.length === 0) expect(op.description).toMatch(/Public/);
      else if (op.security?.[0]?.metricsToken) expect(op.description).toMatch(/Operators only/);
      else expect(op.description, `${method} ${path} roles`).toMatch(/Roles: /);
    }
  }
});

describe('the coverage check is exact (method + path)', () => {
  const doc = () => structuredClone(buildOpenApi()) as { paths: Record<string, Record<string, unknown>> };

  it('a route is missing although a longer path under it is documented', () => {
    const d = doc();
    expect(d.paths['/api/reports/ust/submissions/{id}'].get).toBeDefined();
    delete d.paths['/api/reports/ust'];
    expect(missingOperations(d, allMounted())).toEqual(['GET /api/reports/ust']);
  });

  it('the same path with another method does not count', () => {
    const d = doc();
    delete d.paths['/api/customers/{id}'].delete;
    expect(d.paths['/api/customers/{id}'].get).toBeDefined();
    expect(missingOperations(d, allMounted())).toEqual(['DELETE /api/customers/{id}']);
  });

  it('a route documented per variant needs every variant; /metrics is checked too', () => {
    const d = doc();
    delete d.paths['/api/payment-import/mollie/{token}'];
    delete d.paths['/metrics'];
    expect(missingOperations(d, allMounted()).sort()).toEqual(['GET /metrics', 'POST /api/payment-import/mollie/{token}']);
  });

  it('only a route declared undocumented may be absent; an undeclared route must be documented', () => {
    const d = { paths: {} };
    const declared = [{ method: 'get', fullPath: '/x/:asset', undocumented: true }] as unknown as RegisteredRoute[];
    expect(
      missingOperations(
        d,
        [
          { method: 'GET', path: '/x/:asset' },
          { method: 'GET', path: '/y/:id' },
        ],
        declared,
      ),
    ).toEqual(['GET /y/{id}']);
  });
});

describe('operator endpoints', () => {
  it('/metrics is documented with the METRICS_TOKEN scheme; Bull Board is not part of the API contract', () => {
    const d = buildOpenApi() as any;
    const op = d.paths['/metrics'].get;
    expect(op.security).toEqual([{ metricsToken: [] }]);
    expect(d.components.securitySchemes.metricsToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(Object.keys(op.responses[200].content)).toEqual(['text/plain']);
    expect(Object.keys(d.paths).filter((p) => p.startsWith('/admin'))).toEqual([]);
  });
});

describe('responses list every media type the route serves', () => {
  const contentTypes = (doc: any, path: string, status = '200') => Object.keys(doc.paths[path].get.responses[status].content ?? {}).sort();

  it('reports and invoice documents declare pdf, xml and csv next to (or instead of) JSON', () => {
    const d = buildOpenApi() as any;
    expect(contentTypes(d, '/api/reports/ust')).toEqual(['application/json', 'application/pdf', 'application/xml']);
    expect(contentTypes(d, '/api/reports/bwa')).toEqual(['application/json', 'application/pdf']);
    expect(contentTypes(d, '/api/reports/datev')).toEqual(['text/csv']);
    expect(contentTypes(d, '/api/reports/elster')).toEqual(['application/xml']);
    expect(contentTypes(d, '/api/invoices/{id}/pdf')).toEqual(['application/pdf']);
    expect(contentTypes(d, '/api/invoices/{id}/zugferd')).toEqual(['application/pdf']);
    expect(contentTypes(d, '/api/invoices/{id}/ebinterface')).toEqual(['application/xml']);
    // The JSON representation keeps its schema; a PDF is described by its media type alone
    // (OpenAPI 3.1), text formats as strings.
    expect(d.paths['/api/reports/ust'].get.responses[200].content['application/json'].schema.type).toBe('object');
    expect(d.paths['/api/reports/ust'].get.responses[200].content['application/pdf']).toEqual({});
    expect(d.paths['/api/reports/ust'].get.responses[200].content['application/xml']).toEqual({ schema: { type: 'string' } });
    expect(d.paths['/api/invoices/{id}/pdf'].get.responses[304]).toEqual({ description: expect.stringMatching(/ETag/) });
    // An error response still gets the envelope.
    expect(d.paths['/api/reports/ust'].get.responses[422].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
  });

  it('what the server really answers is among the declared media types', async () => {
    const res = await client(server.url).get('/api/openapi.json');
    const doc = res.body;
    const { viewer } = await createTeam();
    const http = client(server.url, { token: viewer.token });
    const served = async (url: string, path: string, headers: Record<string, string> = {}) => {
      const r = await http.get(url, { headers });
      expect(r.status, `${url}: ${r.raw.toString('utf8').slice(0, 300)}`).toBe(200);
      const type = (r.headers.get('content-type') ?? '').split(';')[0].trim();
      expect(contentTypes(doc, path), url).toContain(type);
      return type;
    };
    expect(await served('/api/reports/ust?year=2024&month=1', '/api/reports/ust')).toBe('application/json');
    expect(await served('/api/reports/ust?year=2024&month=1&format=xml', '/api/reports/ust')).toBe('application/xml');
    expect(await served('/api/reports/ust?year=2024&month=1', '/api/reports/ust', { accept: 'application/xml' })).toBe('application/xml');
    expect(await served('/api/reports/datev?year=2024&month=1', '/api/reports/datev')).toBe('text/csv');
    expect(await served('/api/reports/bwa?year=2024', '/api/reports/bwa')).toBe('application/json');
  });
});

it('serves the rendered reference page and its assets locally', async () => {
  const http = client(server.url);
  const page = await http.get('/api/docs');
  expect(page.status).toBe(200);
  expect(page.body).toContain('swagger-ui-bundle.js');
  const js = await http.get('/api/docs/swagger-ui-bundle.js');
  expect(js.status).toBe(200);
  expect(js.raw.length).toBeGreaterThan(100_000);
  expect((await http.get('/api/docs/../../package.json')).status).toBe(404);
  expect((await http.get('/api/docs/secret.txt')).status).toBe(404);
});

describe('documented as served (found by walking the document against real answers)', () => {
  const doc = () => buildOpenApi() as any;

  it('single reads: ETag on 200, 304 for a current If-None-Match, and the If-None-Match parameter', async () => {
    const { tenant, viewer } = await createTeam();
    const inv = await createDraftInvoice(tenant);
    const http = client(server.url, { token: viewer.token });
    const first = await http.get(`/api/invoices/${inv.id}`);
    const tag = first.headers.get('etag');
    expect(tag).toMatch(/^W\//);
    expect((await http.get(`/api/invoices/${inv.id}`, { headers: { 'If-None-Match': tag! } })).status).toBe(304);
    for (const path of ['/api/invoices/{id}', '/api/customers/{id}', '/api/suppliers/{id}', '/api/users/{id}']) {
      const op = doc().paths[path].get;
      expect(op.responses[200].headers.ETag, path).toBeDefined();
      expect(op.responses[304], path).toEqual({ description: expect.any(String) });
      expect(
        op.parameters.map((p: any) => p.name),
        path,
      ).toContain('If-None-Match');
    }
    // Lists carry no tag.
    expect(doc().paths['/api/invoices'].get.responses[304]).toBeUndefined();
  });

  it('/ready answers the documented readiness body, not the error envelope', async () => {
    const res = await client(server.url).get('/ready');
    const schema = doc().paths['/ready'].get.responses[200].content['application/json'].schema;
    expect(Object.keys(schema.properties)).toEqual(Object.keys(res.body));
    expect(Object.keys(schema.properties.checks.properties).sort()).toEqual(Object.keys(res.body.checks).sort());
    expect(doc().paths['/ready'].get.responses[503].content['application/json'].schema).toEqual(schema);
  });

  it("a 422's extra fields (total mismatch, payment above the amount due) are in its documented envelope", async () => {
    const { tenant, member } = await createTeam();
    const inv = await createSentInvoice(tenant);
    const http = client(server.url, { token: member.token });
    const over = await http.post(`/api/invoices/${inv.id}/payments`, { amount: '99999.00', date: inv.issueDate, method: 'cash' });
    expect(over.status).toBe(422);
    const draft = await createDraftInvoice(tenant);
    const mismatch = await http.post('/api/invoices', {
      type: 'rechnung',
      customerId: draft.customerId,
      items: [{ description: 'x', quantity: 1, unitPrice: '1.00', taxRate: '20' }],
      expectedTotalGross: '5.00',
    });
    expect(mismatch.status).toBe(422);
    for (const [path, method, res] of [
      ['/api/invoices/{id}/payments', 'post', over],
      ['/api/invoices', 'post', mismatch],
    ] as const) {
      const documented = Object.keys(doc().paths[path][method].responses[422].content['application/json'].schema.properties.error.properties);
      expect(documented, path).toEqual(expect.arrayContaining(Object.keys(res.body.error)));
    }
  });

  it('a list with an unknown query parameter (a misspelt filter) is 400, not the unfiltered list', async () => {
    const { viewer } = await createTeam();
    const http = client(server.url, { token: viewer.token });
    for (const url of ['/api/invoices?staus=offen', '/api/suppliers?foo=1']) {
      const res = await http.get(url);
      expect(res.status, url).toBe(400);
      expect(res.body.error.code).toBe('INVALID_INPUT');
    }
  });
});
