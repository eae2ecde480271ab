/**
 * Uploading an e-invoice as multipart/form-data, field `file` (docs/e-invoicing-inbound.md,
 * "Inbound API"): built with FormData and sent with fetch over real HTTP. XML and PDF imported by a
 * real worker; the refusals (no field, another field, two files, 11 MB); a hostile filename is
 * never used; formidable leaves no temp file in the OS temp dir.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../../shared/db';
import { startWorkers, type RunningWorkers } from '../../../workers/worker';
import { createTeam } from '../../helpers/factories';
import { useTestServer } from '../../helpers/server';
import { settledImport } from '../../helpers/incomingEinvoices';
import { needsOfficialFiles, officialPath } from '../../helpers/officialFiles';

const MANIFEST = 'samples:einvoices/manifest.json' as const;
const official = needsOfficialFiles([MANIFEST]);
const manifest: { id: string; file: string; invoice_number: string }[] = official ? JSON.parse(readFileSync(officialPath(MANIFEST), 'utf8')) : [];
const sample = (id: string) => {
  const entry = manifest.find((e) => e.id === id)!;
  return { entry, bytes: readFileSync(path.join(path.dirname(officialPath(MANIFEST)), entry.file)) };
};

const env = useTestServer();
let workers: RunningWorkers;
// The temp dir of this process, watched for files formidable might leave (it is told to write none).
const previousTmp = process.env.TMPDIR;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'einvoice-multipart-'));
beforeAll(async () => {
  process.env.TMPDIR = tmp;
  workers = await startWorkers({ queues: ['documents', 'maintenance'], schedule: false });
});
afterAll(async () => {
  await workers?.close();
  if (previousTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previousTmp;
  rmSync(tmp, { recursive: true, force: true });
});

type Team = Awaited<ReturnType<typeof createTeam>>;

async function post(team: Team, body: FormData | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) {
  const res = await fetch(`${env.server.url}/api/incoming-einvoices`, {
    method: 'POST',
    headers: { authorization: `Bearer ${team.member.token}`, ...headers },
    body,
    duplex: 'half',
  } as RequestInit);
  const text = await res.text();
  return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}

const form = (...files: [field: string, bytes: Buffer | string, type: string, name: string][]) => {
  const f = new FormData();
  for (const [field, bytes, type, name] of files) f.append(field, new Blob([bytes], { type }), name);
  return f;
};

const settled = (team: Team, id: string) => settledImport(env.http, team.viewer.token, id);

describe.skipIf(!official)('official samples as multipart/form-data', () => {
  let team: Team;
  beforeAll(async () => {
    team = await createTeam({ country: 'DE', vatId: 'DE811907980' });
  });

  it('an XRechnung UBL in the field file is imported, the original kept byte for byte', async () => {
    const { entry, bytes } = sample('xrts-ubl-01.01a');
    const res = await post(team, form(['file', bytes, 'application/xml', '01.01a-INVOICE_ubl.xml']));
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('queued');
    const row = await settled(team, res.body.id);
    expect(row).toMatchObject({ status: 'imported', format: 'ubl', mediaType: 'application/xml' });
    const invoice = await env.http.get(`/api/invoices/${row.invoiceId}`, { token: team.viewer.token });
    expect(invoice.body.invoiceNumber).toBe(entry.invoice_number);
    const original = await env.http.get(`/api/invoices/${row.invoiceId}/original`, { token: team.viewer.token });
    expect(Buffer.compare(original.raw, bytes)).toBe(0);
  });

  it('a Factur-X PDF sent as application/octet-stream: the bytes decide, stored as application/pdf', async () => {
    const { bytes } = sample('pdf-en16931-einfach');
    const res = await post(team, form(['file', bytes, 'application/octet-stream', 'invoice.bin']));
    expect(res.status).toBe(202);
    const row = await settled(team, res.body.id);
    expect(row).toMatchObject({ status: 'imported', format: 'facturx-pdf', mediaType: 'application/pdf' });
  });

  it('the same file again, as a form or as the body, is a duplicate of the first upload', async () => {
    const { bytes } = sample('xrts-ubl-01.01a');
    const first = await db()('incomingEinvoices').where({ tenantId: team.tenant.id, status: 'imported', format: 'ubl' }).first();
    const again = await post(team, form(['file', bytes, 'text/xml', 'again.xml']));
    expect(again).toMatchObject({ status: 202, body: { status: 'duplicate' } });
    const asBody = await env.http.request('POST', '/api/incoming-einvoices', {
      token: team.member.token,
      rawBody: bytes,
      headers: { 'content-type': 'application/xml' },
    });
    expect(asBody.body.status).toBe('duplicate');
    const row = await env.http.get(`/api/incoming-einvoices/${again.body.id}`, { token: team.viewer.token });
    expect(row.body).toMatchObject({ duplicateOf: first.id, invoiceId: first.invoiceId });
  });
});

describe('multipart refusals', () => {
  let team: Team;
  beforeAll(async () => {
    team = await createTeam({ country: 'DE' });
  });
  const xml = '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>';

  it('a form without the field file is 400', async () => {
    const f = new FormData();
    f.append('supplierId', 'x');
    const res = await post(team, f);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/no field "file"/);
  });

  it('a file in another field is 400 naming it', async () => {
    const res = await post(team, form(['upload', xml, 'application/xml', 'a.xml']));
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/"upload".*field "file"/);
  });

  it('two files are 400, in the same field or beside it', async () => {
    const two = await post(team, form(['file', xml, 'application/xml', 'a.xml'], ['file', xml, 'application/xml', 'b.xml']));
    expect(two.status).toBe(400);
    expect(two.body.error.message).toMatch(/exactly one file/);
    const beside = await post(team, form(['file', xml, 'application/xml', 'a.xml'], ['attachment', xml, 'application/xml', 'b.xml']));
    expect(beside.status).toBe(400);
  });

  it('an empty file is 400; a file that is neither XML nor PDF is 415', async () => {
    expect((await post(team, form(['file', '', 'application/xml', 'a.xml']))).status).toBe(400);
    const text = await post(team, form(['file', 'just text', 'text/plain', 'a.txt']));
    expect(text.status).toBe(415);
  });

  it('11 MB is 413: with a Content-Length before reading, streamed once 10 MB have arrived', async () => {
    const big = Buffer.alloc(11 * 1024 * 1024, 0x20);
    expect((await post(team, form(['file', big, 'application/pdf', 'big.pdf']))).status).toBe(413);

    // The same form as a chunked stream (no Content-Length): formidable's file limit stops it.
    const boundary = 'bigboundary';
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const chunks = [head, ...Array.from({ length: 11 }, () => Buffer.alloc(1024 * 1024, 0x20)), tail];
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    const res = await post(team, stream, { 'content-type': `multipart/form-data; boundary=${boundary}` });
    expect(res.status).toBe(413);
  });

  it('huge part headers or many fields beside the file are refused', async () => {
    const boundary = 'hdr';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.xml"\r\nX-Pad: ${'a'.repeat(11 * 1024 * 1024)}\r\n\r\n${xml}\r\n--${boundary}--\r\n`;
    const res = await env.http.request('POST', '/api/incoming-einvoices', {
      token: team.member.token,
      rawBody: body,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    expect(res.status).toBe(413);
    const f = form(['file', xml, 'application/xml', 'a.xml']);
    for (let i = 0; i < 20; i++) f.append(`note${i}`, 'x');
    expect((await post(team, f)).status).toBe(413);
  });

  it('a hostile filename is never used: the upload is stored, nothing is written under its name', async () => {
    const name = `../../../../${path.basename(tmp)}/evil\r\n"; name="other.xml`;
    const res = await post(team, form(['file', xml, 'application/xml', name]));
    expect(res.status).toBe(202);
    const row = await db()('incomingEinvoices').where({ id: res.body.id }).first();
    expect(row.mediaType).toBe('application/xml');
    expect(existsSync(path.join(tmp, 'evil'))).toBe(false);
  });

  it('an empty multipart body is 400; a gzipped form is read like a plain one', async () => {
    const empty = await env.http.request('POST', '/api/incoming-einvoices', {
      token: team.member.token,
      rawBody: '',
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
    });
    expect(empty.status).toBe(400);
    const boundary = 'gz';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.xml"\r\nContent-Type: application/xml\r\n\r\n${xml} <!-- gz -->\r\n--${boundary}--\r\n`;
    const res = await env.http.request('POST', '/api/incoming-einvoices', {
      token: team.member.token,
      rawBody: gzipSync(body),
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-encoding': 'gzip' },
    });
    expect(res.status).toBe(202);
    const row = await db()('incomingEinvoices').where({ id: res.body.id }).first();
    expect(row.original.toString()).toBe(`${xml} <!-- gz -->`);
  });

  it('broken multipart is 400; a compressed form with an unknown encoding 415', async () => {
    const broken = await env.http.request('POST', '/api/incoming-einvoices', {
      token: team.member.token,
      rawBody: '--x\r\nContent-Disposition: form-data; name="file"; filename="a.xml"\r\n\r\n<a/>',
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
    });
    expect(broken.status).toBe(400);
    const encoded = await env.http.request('POST', '/api/incoming-einvoices', {
      token: team.member.token,
      rawBody: 'whatever',
      headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-encoding': 'foo' },
    });
    expect(encoded.status).toBe(415);
  });

  it('the OpenAPI document declares both bodies, the form with its field file', async () => {
    const doc = await env.http.get('/api/openapi.json');
    const body = doc.body.paths['/api/incoming-einvoices'].post.requestBody;
    expect(Object.keys(body.content)).toEqual(['application/xml', 'text/xml', 'application/pdf', 'multipart/form-data']);
    expect(body.content['multipart/form-data'].schema).toMatchObject({ required: ['file'], properties: { file: { type: 'string', format: 'binary' } } });
  });

  it('no upload left a temp file in the OS temp dir', () => {
    // formidable writes its files straight into uploadDir (os.tmpdir()); the tsx-* folder is the
    // sandboxed workers' compile cache.
    const files = readdirSync(tmp, { withFileTypes: true }).filter((e) => !e.isDirectory());
    expect(files.map((e) => e.name)).toEqual([]);
  });
});
