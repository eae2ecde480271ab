import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { routers } from '../../../api/routes';

let server: Awaited<ReturnType<typeof startTestServer>>;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

const toOpenApi = (p: string) => p.replace(/:([A-Za-z_]+)/g, '{$1}');

it('every mounted route has an operation in /api/openapi.json, with roles and the error envelope', async () => {
  const res = await client(server.url).get('/api/openapi.json');
  expect(res.status).toBe(200);
  const doc = res.body;
  expect(doc.openapi).toBe('3.1.0');
  expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });

  const missing: string[] = [];
  let checked = 0;
  for (const router of routers) {
    for (const layer of router.stack) {
      for (const method of layer.methods.filter((m) => m !== 'HEAD')) {
        const path = toOpenApi(String(layer.path));
        if (path === '/api/docs/{asset}') continue; // static files of the reference page
        checked++;
        const op = doc.paths[path]?.[method.toLowerCase()];
        // The inbound webhook route is documented once per provider instead of generically.
        const variants = Object.keys(doc.paths).filter((p) => p.startsWith(path.split('{')[0]) && doc.paths[p][method.toLowerCase()]);
        if (!op && !variants.length) missing.push(`${method} ${path}`);
      }
    }
  }
  expect(missing).toEqual([]);
  // The inbound webhook endpoint is documented per provider with its signature headers.
  for (const provider of ['stripe', 'paypal', 'mollie', 'bank']) {
    const op = doc.paths[`/api/payment-import/${provider}/{token}`]?.post;
    expect(op, provider).toBeDefined();
    expect(op.parameters.map((p: any) => p.name)).toContain('token');
  }
  expect(doc.paths['/api/payment-import/stripe/{token}'].post.parameters.map((p: any) => p.name)).toContain('Stripe-Signature');
  expect(checked).toBeGreaterThan(5);

  for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      expect(op.summary, `${method} ${path} summary`).toBeTruthy();
      expect(op.responses.default.content['application/json'].schema).toBeDefined();
      if (op.security?.length === 0) expect(op.description).toMatch(/Public/);
      else expect(op.description, `${method} ${path} roles`).toMatch(/Roles: /);
    }
  }
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
