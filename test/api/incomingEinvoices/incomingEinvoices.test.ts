/**
 * The inbound API end to end (docs/e-invoicing-inbound.md, "Inbound API"): official samples
 * uploaded through the API, imported by a real worker into incoming invoices whose totals are the
 * manifest's, the original served back byte for byte; duplicates, refusals and tenant scoping.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../../shared/db';
import { useWorkers } from '../../helpers/workers';
import { createTeam } from '../../helpers/factories';
import { useTestServer } from '../../helpers/server';
import { settledImport } from '../../helpers/incomingEinvoices';
import { needsOfficialFiles, officialPath } from '../../helpers/officialFiles';

interface ManifestEntry {
  id: string;
  file: string;
  invoice_number: string;
  totals: Record<string, string | null>;
}

const MANIFEST = 'samples:einvoices/manifest.json' as const;
const official = needsOfficialFiles([MANIFEST]);
const manifest: ManifestEntry[] = official ? JSON.parse(readFileSync(officialPath(MANIFEST), 'utf8')) : [];
const sample = (id: string) => {
  const entry = manifest.find((e) => e.id === id)!;
  return { entry, bytes: readFileSync(path.join(path.dirname(officialPath(MANIFEST)), entry.file)) };
};
const money = (v: string | null) => Number(v).toFixed(2);

const env = useTestServer();
useWorkers(['documents', 'maintenance']);

type Team = Awaited<ReturnType<typeof createTeam>>;
const upload = (team: Team, bytes: Buffer | string, contentType: string, query = '') =>
  env.http.request('POST', `/api/incoming-einvoices${query}`, { token: team.member.token, rawBody: bytes, headers: { 'content-type': contentType } });

const settled = (team: Team, id: string) => settledImport(env.http, team.viewer.token, id);

describe.skipIf(!official)('official samples through the API and a real worker', () => {
  let team: Team;
  beforeAll(async () => {
    // The samples are German invoices (7 % and 19 %): a German tenant has those rates.
    team = await createTeam({ country: 'DE', vatId: 'DE811907980' });
  });

  it.each([
    ['xrts-ubl-01.01a', 'application/xml', 'ubl'],
    ['xrts-cii-04.05a', 'text/xml', 'cii'],
    ['pdf-en16931-einfach', 'application/pdf', 'facturx-pdf'],
  ])('%s is imported with the manifest’s totals and its original served back', async (id, type, format) => {
    const { entry, bytes } = sample(id);
    const res = await upload(team, bytes, type);
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('queued');
    const row = await settled(team, res.body.id);
    expect(row).toMatchObject({ status: 'imported', format, valid: true, errors: [] });

    const invoice = await env.http.get(`/api/invoices/${row.invoiceId}`, { token: team.viewer.token });
    expect(invoice.status).toBe(200);
    expect(invoice.body).toMatchObject({
      type: 'eingangsrechnung',
      invoiceNumber: entry.invoice_number,
      totalNet: money(entry.totals['BT-109_net']),
      totalTax: money(entry.totals['BT-110_tax']),
      totalGross: money(entry.totals['BT-112_gross']),
    });

    const original = await env.http.get(`/api/invoices/${row.invoiceId}/original`, { token: team.viewer.token });
    expect(original.status).toBe(200);
    expect(original.headers.get('content-type')).toContain(type);
    expect(Buffer.compare(original.raw, bytes)).toBe(0);
  });

  it('created the supplier once and matched it by VAT ID for the other samples', async () => {
    const suppliers = await db()('suppliers').where({ tenantId: team.tenant.id });
    expect(suppliers).toHaveLength(1);
    expect(suppliers[0].vatId).toBe('DE123456789');
  });

  it('the same file again is a duplicate naming the earlier upload and its invoice', async () => {
    const { bytes } = sample('xrts-ubl-01.01a');
    const first = await db()('incomingEinvoices').where({ tenantId: team.tenant.id, status: 'imported' }).orderBy('receivedAt').first();
    const res = await upload(team, bytes, 'application/xml');
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('duplicate');
    const row = await env.http.get(`/api/incoming-einvoices/${res.body.id}`, { token: team.viewer.token });
    expect(row.body).toMatchObject({ status: 'duplicate', duplicateOf: first.id, invoiceId: first.invoiceId });
  });

  it('the same invoice in another file (same supplier and number) is a duplicate naming the invoice', async () => {
    const { bytes } = sample('xrts-ubl-01.01a');
    const res = await upload(team, Buffer.concat([bytes, Buffer.from('\n')]), 'application/xml');
    expect(res.body.status).toBe('queued');
    const row = await settled(team, res.body.id);
    const first = await db()('incomingEinvoices').where({ tenantId: team.tenant.id, status: 'imported', format: 'ubl' }).first();
    expect(row).toMatchObject({ status: 'duplicate', invoiceId: first.invoiceId });
    const [{ count }] = await db()('invoices').where({ tenantId: team.tenant.id, type: 'eingangsrechnung' }).count({ count: '*' });
    expect(Number(count)).toBe(3);
  });

  it('lists the uploads with the list envelope, filtered by status', async () => {
    const res = await env.http.get('/api/incoming-einvoices?status=imported&limit=2', { token: team.viewer.token });
    expect(res.status).toBe(200);
    expect(res.body.pagination).toMatchObject({ page: 1, limit: 2, total: 3, totalPages: 2 });
    expect(res.body.data).toHaveLength(2);
    expect(res.body.data.every((r: { status: string }) => r.status === 'imported')).toBe(true);
  });

  it('another tenant can read neither the upload nor the original', async () => {
    const other = await createTeam({ country: 'DE' });
    const row = await db()('incomingEinvoices').where({ tenantId: team.tenant.id, status: 'imported' }).first();
    expect((await env.http.get(`/api/incoming-einvoices/${row.id}`, { token: other.viewer.token })).status).toBe(404);
    expect((await env.http.get(`/api/invoices/${row.invoiceId}/original`, { token: other.viewer.token })).status).toBe(404);
    const list = await env.http.get('/api/incoming-einvoices', { token: other.viewer.token });
    expect(list.body.pagination.total).toBe(0);
  });
});

describe('refusals', () => {
  let team: Team;
  beforeAll(async () => {
    team = await createTeam({ country: 'DE' });
  });

  it('broken XML is rejected with the reader’s reason', async () => {
    const res = await upload(team, '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><cbc:ID>', 'application/xml');
    expect(res.status).toBe(202);
    const row = await settled(team, res.body.id);
    expect(row.status).toBe('rejected');
    expect(row.errors[0].rule).toBe('READ');
    expect(row.errors[0].message).toBeTruthy();
    expect(row.invoiceId).toBeNull();
  });

  it('XXE is rejected before parsing', async () => {
    const xxe = '<?xml version="1.0"?><!DOCTYPE Invoice [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><Invoice>&xxe;</Invoice>';
    const res = await upload(team, xxe, 'text/xml');
    const row = await settled(team, res.body.id);
    expect(row.status).toBe('rejected');
    expect(row.errors[0].message).toMatch(/DOCTYPE|ENTITY/i);
  });

  it('a body over 10 MB is 413, text/plain 415, an empty body or a form without a file 400', async () => {
    const big = Buffer.alloc(11 * 1024 * 1024, 0x20);
    expect((await upload(team, big, 'application/pdf')).status).toBe(413);
    const plain = await upload(team, '<Invoice/>', 'text/plain');
    expect(plain.status).toBe(415);
    expect(plain.body.error.message).toMatch(/multipart/);
    // Multipart itself: multipart.test.ts.
    const multipart = await upload(team, '--x\r\n\r\n--x--', 'multipart/form-data; boundary=x');
    expect(multipart.status).toBe(400);
    expect(multipart.body.error.message).toMatch(/multipart/);
    expect((await upload(team, '', 'application/xml')).status).toBe(400);
  });

  it('a viewer may not upload; an invoice without a stored file has no original', async () => {
    const res = await env.http.request('POST', '/api/incoming-einvoices', {
      token: team.viewer.token,
      rawBody: '<x/>',
      headers: { 'content-type': 'application/xml' },
    });
    expect(res.status).toBe(403);
    expect((await env.http.get('/api/invoices/00000000-0000-4000-8000-000000000000/original', { token: team.viewer.token })).status).toBe(404);
  });
});
