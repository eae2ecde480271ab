import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import openapiTS from 'openapi-typescript';
import { afterAll, expect, it } from 'vitest';
import { routers } from '../../../api/routes';
import { buildOpenApi } from '../../../api/openapi';

/**
 * The document is for client generators (docs/openapi.md): it lints clean with Redocly's
 * recommended rules, and a TypeScript client generated from it type-checks a program that reads
 * fields without optional chaining, which compiles only if those fields are marked required.
 * (That the required fields really are always sent is checked on every answer of the test suite:
 * api/responseSchemas.ts.)
 */
void routers; // importing the routers declares the routes the document is built from
const doc = buildOpenApi([]);
const dir = mkdtempSync(path.join(tmpdir(), 'openapi-client-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("lints clean with Redocly's recommended rules (no errors, no warnings)", async () => {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: '/openapi.json', config });
  expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`)).toEqual([]);
});

it('success responses mark their always-present fields required', () => {
  let schemas = 0;
  let withRequired = 0;
  for (const ops of Object.values(
    doc.paths as Record<
      string,
      Record<string, { responses: Record<string, { content?: Record<string, { schema?: { properties?: object; required?: string[] } }> }> }>
    >,
  )) {
    for (const op of Object.values(ops)) {
      for (const [status, r] of Object.entries(op.responses)) {
        const schema = r.content?.['application/json']?.schema;
        if (!/^2/.test(status) || !schema?.properties) continue;
        schemas++;
        if (schema.required?.length) withRequired++;
      }
    }
  }
  expect(schemas).toBeGreaterThan(50);
  expect(withRequired).toBe(schemas);
});

it('a TypeScript client generated from it (openapi-typescript) type-checks a program using invoices, API keys and webhook subscriptions', async () => {
  writeFileSync(path.join(dir, 'api.d.ts'), await openapiTS(doc as unknown as Parameters<typeof openapiTS>[0]));
  writeFileSync(
    path.join(dir, 'program.ts'),
    `import type { paths, components } from './api';
type Json<P extends keyof paths, M extends keyof paths[P], S extends number> =
  paths[P][M] extends { responses: infer R } ? (R extends Record<S, { content: { 'application/json': infer B } }> ? B : never) : never;

type Invoice = Json<'/api/invoices/{id}', 'get', 200>;
type InvoiceList = Json<'/api/invoices', 'get', 200>;
type NewInvoice = paths['/api/invoices']['post']['requestBody'] extends { content: { 'application/json': infer B } } | undefined ? B : never;
type ApiError = components['schemas']['Error'];

// Required fields read without '?.' or '!': this compiles only when the document marks them required.
export function summary(invoice: Invoice): string {
  const lines: number = invoice.items.length;
  const gross: string = invoice.totalGross;
  const status: string = invoice.status;
  return \`\${invoice.id} \${status} \${gross} (\${lines} lines, due \${invoice.amountDue})\`;
}
export function dueTotal(list: InvoiceList): number {
  return list.data.filter((i) => i.status === 'offen').length + list.pagination.total;
}
export const draft: NewInvoice = { type: 'rechnung', customerId: '00000000-0000-0000-0000-000000000000', items: [] };
export const message = (e: ApiError): string => \`\${e.error.code}: \${e.error.message}\`;
type NewApiKey = Json<'/api/api-keys', 'post', 201>;
type Subscription = Json<'/api/webhook-subscriptions', 'post', 201>;
type Deliveries = Json<'/api/webhook-subscriptions/{id}/deliveries', 'get', 200>;
export const bearer = (k: NewApiKey): string => \`Bearer \${k.key}\`;
export const signingSecret = (s: Subscription): string => s.secret;
export const events = (s: Subscription): string[] => s.events;
export const attempts = (d: Deliveries): number => d.length;
// Fields present only sometimes stay optional: reading them without a check must not compile.
// @ts-expect-error supplierId is sent on incoming invoices only
export const supplier: string = invoice0().supplierId;
declare function invoice0(): Invoice;
`,
  );
  writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module: 'preserve', moduleResolution: 'bundler', skipLibCheck: false },
      files: ['program.ts'],
    }),
  );
  const tsc = path.resolve(import.meta.dirname, '../../../node_modules/typescript/bin/tsc');
  const run = await promisify(execFile)(process.execPath, [tsc, '-p', dir], { timeout: 120_000 }).catch((e: { stdout?: string; stderr?: string }) => e);
  expect(`${run.stdout ?? ''}${run.stderr ?? ''}`).toBe('');
}, 180_000);
