import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';

let server: Awaited<ReturnType<typeof startTestServer>>;
let http: TestClient;
beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});
afterAll(async () => server.close());

describe('GET /api/tax/exemption-reasons', () => {
  it('lists the reasons of a country with code, text, legal basis and VATEX code', async () => {
    const { viewer } = await createTeam();
    const at = await http.get('/api/tax/exemption-reasons?country=AT', { token: viewer.token });
    expect(at.status).toBe(200);
    expect(at.body).toContainEqual({ code: 'AT-6-1-27', text: 'Umsatzsteuerbefreit – Kleinunternehmer', legalBasis: '§ 6 Abs. 1 Z 27 UStG 1994', vatex: null });
    expect(at.body).toContainEqual(expect.objectContaining({ code: 'AT-6-1-19', vatex: 'VATEX-EU-132-1C' }));
    for (const r of at.body) expect(Object.keys(r).sort()).toEqual(['code', 'legalBasis', 'text', 'vatex']);

    const de = await http.get('/api/tax/exemption-reasons?country=DE', { token: viewer.token });
    expect(de.body.map((r: { code: string }) => r.code)).toContain('DE-19');
  });

  it('refuses an unknown or missing country and an anonymous caller', async () => {
    const { viewer } = await createTeam();
    const fr = await http.get('/api/tax/exemption-reasons?country=FR', { token: viewer.token });
    expect(fr.status).toBe(400);
    expect(fr.body.error.code).toBe('INVALID_INPUT');
    expect((await http.get('/api/tax/exemption-reasons', { token: viewer.token })).status).toBe(400);
    expect((await http.get('/api/tax/exemption-reasons?country=AT')).status).toBe(401);
  });
});
