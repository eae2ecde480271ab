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

type Team = Awaited<ReturnType<typeof createTeam>>;
const line = (over: Record<string, unknown> = {}) => ({ description: 'Leistung', quantity: 1, unitPrice: '100.00', taxRate: '20', ...over });

async function customer(team: Team, body: Record<string, unknown>) {
  const res = await http.post('/api/customers', { name: 'Kunde', email: 'k@example.com', address: 'Weg 1\n1010 Wien', ...body }, { token: team.admin.token });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function draft(team: Team, customerId: string, items: unknown[]) {
  return http.post('/api/invoices', { type: 'rechnung', customerId, items }, { token: team.admin.token });
}

describe('VAT category per line', () => {
  it('is inferred when absent: standard, reverse charge to another member state, export outside the EU', async () => {
    const team = await createTeam();
    const domestic = await draft(team, await customer(team, {}), [line()]);
    expect(domestic.status).toBe(201);
    expect(domestic.body.items[0]).toMatchObject({ taxCategory: 'standard', exemptionReason: null, exemptionNote: null });
    expect(domestic.body.warnings).toEqual([]);

    const de = await draft(team, await customer(team, { vatId: 'DE123456789', company: 'Muster GmbH' }), [line({ taxRate: '0' })]);
    expect(de.body.items[0].taxCategory).toBe('reverseCharge');

    const ch = await draft(team, await customer(team, { country: 'CH', address: 'Bahnhofstrasse 1\n8001 Zürich' }), [line({ taxRate: '0' })]);
    expect(ch.body.items[0].taxCategory).toBe('export');
    const sent = await http.post(`/api/invoices/${ch.body.id}/send`, {}, { token: team.admin.token });
    expect(sent.status).toBe(202);
    const read = await http.get(`/api/invoices/${ch.body.id}`, { token: team.admin.token });
    expect(read.body.items[0].taxCategory).toBe('export');
  });

  it('accepts a bare domestic 0 % line with a warning, refuses to send it, and sends it once classified', async () => {
    const team = await createTeam();
    const c = await customer(team, {});
    const created = await draft(team, c, [line(), line({ taxRate: '0', description: 'Miete Büro' })]);
    expect(created.status).toBe(201);
    expect(created.body.items[1].taxCategory).toBeNull();
    expect(created.body.warnings).toEqual([{ field: 'items.1.taxCategory', message: expect.stringContaining('before the invoice can be sent') }]);

    const refused = await http.post(`/api/invoices/${created.body.id}/send`, {}, { token: team.admin.token });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('INVALID_INPUT');
    const detail = refused.body.error.details.find((d: { field: string }) => d.field === 'items.1.taxCategory');
    expect(detail.message).toMatch(/Miete Büro/);
    expect(detail.message).toMatch(/exempt/);
    const still = await http.get(`/api/invoices/${created.body.id}`, { token: team.admin.token });
    expect(still.body).toMatchObject({ status: 'entwurf', number: null });

    const updated = await http.put(
      `/api/invoices/${created.body.id}`,
      {
        type: 'rechnung',
        customerId: c,
        items: [
          line(),
          line({ taxRate: '0', description: 'Miete Büro', taxCategory: 'exempt', exemptionReason: 'AT-6-1-16', exemptionNote: 'Geschäftsraummiete' }),
        ],
      },
      { token: team.admin.token },
    );
    expect(updated.status).toBe(200);
    const sent = await http.post(`/api/invoices/${created.body.id}/send`, {}, { token: team.admin.token });
    expect(sent.status).toBe(202);
    const read = await http.get(`/api/invoices/${created.body.id}`, { token: team.admin.token });
    expect(read.body.items[1]).toMatchObject({ taxCategory: 'exempt', exemptionReason: 'AT-6-1-16', exemptionNote: 'Geschäftsraummiete' });
    expect(read.body.warnings).toEqual([]);
  });

  it('checks a given category against the facts and names the field', async () => {
    const team = await createTeam();
    const c = await customer(team, {});
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ taxRate: '0', taxCategory: 'standard' }, 'items.0.taxRate', /greater than 0/],
      [{ taxRate: '20', taxCategory: 'exempt', exemptionReason: 'AT-6-1-19' }, 'items.0.taxRate', /must be 0/],
      [{ taxRate: '0', taxCategory: 'exempt' }, 'items.0.exemptionReason', /required/],
      [{ taxRate: '0', taxCategory: 'exempt', exemptionReason: 'DE-4-14a' }, 'items.0.exemptionReason', /not an exemption reason of AT/],
      [{ taxRate: '0', taxCategory: 'reverseCharge' }, 'items.0.taxCategory', /buyer's VAT ID/],
      [{ taxRate: '0', taxCategory: 'zeroRated' }, 'items.0.taxCategory', /does not exist in Austria/],
      [{ taxRate: '0', taxCategory: 'export', exemptionReason: 'AT-6-1-19' }, 'items.0.exemptionReason', /only allowed/],
    ];
    for (const [over, field, message] of cases) {
      const res = await draft(team, c, [line(over)]);
      expect(res.status, JSON.stringify(over)).toBe(400);
      expect(res.body.error.details).toContainEqual({ field, message: expect.stringMatching(message) });
    }
    const unknown = await draft(team, c, [line({ taxCategory: 'luxury' })]);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('INVALID_INPUT');
  });

  it('accepts intra-Community supply with both VAT IDs', async () => {
    const team = await createTeam();
    const c = await customer(team, { vatId: 'DE123456789', company: 'Muster GmbH', address: 'Hauptstr. 1\n10115 Berlin' });
    const res = await draft(team, c, [line({ taxRate: '0', taxCategory: 'intraCommunitySupply', description: 'Maschine' })]);
    expect(res.status).toBe(201);
    expect(res.body.items[0].taxCategory).toBe('intraCommunitySupply');
    expect((await http.post(`/api/invoices/${res.body.id}/send`, {}, { token: team.admin.token })).status).toBe(202);
  });
});

describe('small-business scheme', () => {
  it('makes every sales line exempt under the country provision and refuses a rate', async () => {
    const team = await createTeam();
    const before = await draft(team, await customer(team, {}), [line({ taxRate: '0' })]);
    expect(before.body.items[0].taxCategory).toBeNull();

    const on = await http.put('/api/settings', { smallBusiness: true }, { token: team.admin.token });
    expect(on.status).toBe(200);
    expect(on.body.smallBusiness).toBe(true);

    const c = await customer(team, {});
    const withRate = await draft(team, c, [line({ taxRate: '20' })]);
    expect(withRate.status).toBe(400);
    expect(withRate.body.error.details).toContainEqual({ field: 'items.0.taxRate', message: expect.stringMatching(/small-business/) });

    const ok = await draft(team, c, [line({ taxRate: '0' })]);
    expect(ok.status).toBe(201);
    expect(ok.body.items[0]).toMatchObject({ taxCategory: 'exempt', exemptionReason: 'AT-6-1-27' });

    // The draft written before the switch is decided when it is sent: exempt now.
    expect((await http.post(`/api/invoices/${before.body.id}/send`, {}, { token: team.admin.token })).status).toBe(202);
    const read = await http.get(`/api/invoices/${before.body.id}`, { token: team.admin.token });
    expect(read.body.items[0]).toMatchObject({ taxCategory: 'exempt', exemptionReason: 'AT-6-1-27' });
  });

  it('is refused for a tenant outside AT and DE', async () => {
    const team = await createTeam({ country: 'FR', vatId: null });
    const res = await http.put('/api/settings', { smallBusiness: true }, { token: team.admin.token });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toContainEqual({ field: 'smallBusiness', message: expect.stringMatching(/AT and DE/) });
  });
});
