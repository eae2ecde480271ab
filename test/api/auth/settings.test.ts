import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { db } from '../../../shared/db';
import { decryptJson } from '../../../shared/crypto/secretBox';
import { DEFAULT_EMAIL_TEMPLATES } from '../../../shared/domain/emailTemplate';
import { expectError } from './authHelpers';

let server: Awaited<ReturnType<typeof startTestServer>>;
let http: TestClient;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});
afterAll(async () => server.close());

const CREDS = { tid: 'TID123456789', benid: 'WSUSER01', pin: 'Sup3r-Secret-PIN!', herstellerid: 'ATU99999999' };

describe('role matrix', () => {
  it('GET: manager and admin; PUT: admin only', async () => {
    const team = await createTeam();
    for (const r of ['viewer', 'member'] as const) expectError(await http.get('/api/settings', { token: team[r].token }), 403, 'FORBIDDEN');
    for (const r of ['manager', 'admin'] as const) expect((await http.get('/api/settings', { token: team[r].token })).status).toBe(200);
    for (const r of ['viewer', 'member', 'manager'] as const) {
      expectError(await http.put('/api/settings', { companyName: 'Hijack' }, { token: team[r].token }), 403, 'FORBIDDEN');
    }
    expect((await http.put('/api/settings', { companyName: 'Neu GmbH' }, { token: team.admin.token })).status).toBe(200);
  });
});

describe('settings', () => {
  it('GET shows company data and German template defaults with the variables', async () => {
    const { admin, tenant } = await createTeam();
    const res = await http.get('/api/settings', { token: admin.token });
    expect(res.body).toEqual({
      companyName: tenant.name,
      address: 'Hauptstraße 1\n1010 Wien',
      email: 'office@test.example',
      vatId: 'ATU12345678',
      taxNumber: '12-345/6789',
      iban: 'AT611904300234573201',
      bic: 'BKAUATWW',
      country: 'AT',
      currency: 'EUR',
      plan: 'free',
      templates: DEFAULT_EMAIL_TEMPLATES,
      numberFormats: {},
      zugferdByDefault: false,
      smallBusiness: false,
      contactName: null,
      contactPhone: null,
      contactEmail: null,
      peppolId: null,
      datev: {},
      einvoiceImport: { autoPost: false, expenseAccount: null },
      dunning: { enabled: false, automatic: false, levels: [] },
      portalCredentialsConfigured: false,
    });
    for (const v of ['customerName', 'invoiceNumber', 'totalGross', 'dueDate', 'companyName']) {
      expect(res.body.templates.emailSubject + res.body.templates.emailBody).toContain(`{{${v}}}`);
    }
  });

  it('PUT changes only what is sent; jsonb settings merge; values are normalised', async () => {
    const { admin, tenant } = await createTeam();
    const res = await http.put(
      '/api/settings',
      {
        companyName: 'Beispiel GmbH',
        vatId: 'de 123 456 789',
        iban: 'de89 3704 0044 0532 0130 00',
        bic: 'cobadeffxxx',
        country: 'DE',
        plan: 'business',
        templates: { emailSubject: 'Ihre Rechnung {{invoiceNumber}}' },
        numberFormats: { rechnung: 'RE-{YYYY}-{NNNNN}' },
        zugferdByDefault: true,
        datev: { consultantNumber: '1234567', clientNumber: '12345', chart: 'SKR04' },
      },
      { token: admin.token },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      companyName: 'Beispiel GmbH',
      vatId: 'DE123456789',
      iban: 'DE89370400440532013000',
      bic: 'COBADEFFXXX',
      country: 'DE',
      plan: 'business',
      address: 'Hauptstraße 1\n1010 Wien',
      templates: { emailSubject: 'Ihre Rechnung {{invoiceNumber}}', emailBody: DEFAULT_EMAIL_TEMPLATES.emailBody },
      numberFormats: { rechnung: 'RE-{YYYY}-{NNNNN}' },
      zugferdByDefault: true,
      datev: { consultantNumber: '1234567', clientNumber: '12345', chart: 'SKR04' },
    });
    const second = await http.put('/api/settings', { numberFormats: { angebot: 'AN{YY}{MM}-{NNNN}' }, datev: { chart: 'SKR03' } }, { token: admin.token });
    expect(second.body.numberFormats).toEqual({ rechnung: 'RE-{YYYY}-{NNNNN}', angebot: 'AN{YY}{MM}-{NNNN}' });
    expect(second.body.datev).toEqual({ consultantNumber: '1234567', clientNumber: '12345', chart: 'SKR03' });
    const row = await db()('tenants').where({ id: tenant.id }).first();
    expect(row.settings.zugferdByDefault).toBe(true);
    expect(await db()('auditLog').where({ tenantId: tenant.id, action: 'settings.updated' }).count({ n: '*' }).first()).toEqual({ n: 2 });
  });

  it('format checks: VAT ID per country, IBAN checksum, BIC, number format, currency, unknown fields → 400 with details', async () => {
    const { admin } = await createTeam();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ vatId: 'ATU1234567' }, 'vatId'],
      [{ vatId: 'DE12345678' }, 'vatId'],
      [{ vatId: 'US123456789' }, 'vatId'],
      [{ iban: 'AT611904300234573202' }, 'iban'],
      [{ bic: 'NOPE' }, 'bic'],
      [{ numberFormats: { rechnung: 'RE-{YYYY}' } }, 'numberFormats.rechnung'],
      [{ numberFormats: { eingangsrechnung: 'X-{NNNN}' } }, 'numberFormats.eingangsrechnung'],
      [{ currency: 'eur' }, 'currency'],
      [{ datev: { chart: 'SKR99' } }, 'datev.chart'],
      [{ country: 'CH' }, 'country'],
      [{ plan: 'gold' }, 'plan'],
      [{ logo: 'x' }, 'logo'],
      [{ portalCredentials: { tid: 'x' } }, 'portalCredentials'],
      // Login takes an 8-character tid, the upload refuses it; the logout wants an alphanumeric benid.
      [{ portalCredentials: { ...CREDS, tid: '12345678' } }, 'portalCredentials'],
      [{ portalCredentials: { ...CREDS, benid: 'WS-USER1' } }, 'portalCredentials'],
      [{ portalCredentials: { ...CREDS, herstellerid: 'ATU 9999999' } }, 'portalCredentials'],
    ];
    for (const [body, field] of cases) {
      const res = await http.put('/api/settings', body, { token: admin.token });
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.body.error.details.map((d: { field: string }) => d.field).join(','), JSON.stringify(body)).toContain(field);
    }
    expectError(await http.put('/api/settings', {}, { token: admin.token }), 400, 'INVALID_INPUT');
    // Clearing optional fields is allowed.
    const cleared = await http.put('/api/settings', { vatId: null, iban: null }, { token: admin.token });
    expect(cleared.body).toMatchObject({ vatId: null, iban: null });
  });

  it('portal credentials are write-only: encrypted at rest, never in a response, an audit row or the other tenant', async () => {
    const { admin, manager, tenant } = await createTeam();
    const put = await http.put('/api/settings', { portalCredentials: CREDS }, { token: admin.token });
    expect(put.status).toBe(200);
    expect(put.body.portalCredentialsConfigured).toBe(true);
    expect(put.body).not.toHaveProperty('portalCredentials');
    const get = await http.get('/api/settings', { token: manager.token });
    expect(get.body.portalCredentialsConfigured).toBe(true);
    for (const res of [put, get]) {
      const text = res.raw.toString('utf8');
      for (const v of Object.values(CREDS)) expect(text).not.toContain(v);
    }
    const row = await db()('tenants').where({ id: tenant.id }).first();
    expect(row.portalCredentialsEnc).toMatch(/^v1\./);
    expect(row.portalCredentialsEnc).not.toContain(CREDS.pin);
    expect(JSON.stringify(row.settings)).not.toContain(CREDS.pin);
    expect(decryptJson(row.portalCredentialsEnc)).toEqual(CREDS);
    const audits = await db()('auditLog').where({ tenantId: tenant.id });
    expect(JSON.stringify(audits)).not.toContain(CREDS.pin);
    const removed = await http.put('/api/settings', { portalCredentials: null }, { token: admin.token });
    expect(removed.body.portalCredentialsConfigured).toBe(false);
  });

  it('each tenant sees and changes only its own settings', async () => {
    const a = await createTeam();
    const b = await createTeam();
    await http.put('/api/settings', { companyName: 'Nur A GmbH' }, { token: a.admin.token });
    expect((await http.get('/api/settings', { token: b.admin.token })).body.companyName).toBe(b.tenant.name);
  });
});
