import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createDraftInvoice } from '../../helpers/invoiceFactory';
import { todayVienna } from '../../../shared/domain/dates';

let server: Awaited<ReturnType<typeof startTestServer>>;
let http: TestClient;
beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});
afterAll(async () => server.close());

const year = todayVienna().slice(0, 4);
const month = todayVienna().slice(5, 7);

/**
 * Tenant number formats (settings.numberFormats). The counter restarts every year, so a format
 * without the year would repeat last year's numbers from January on and every send would fail on
 * the unique number: such a format is refused when it is saved.
 */
describe('invoice number formats', () => {
  it.each(['RE-{NNNNN}', 'RE-{MM}-{NNNN}', '{NNN}', 'R{Y}-{NNNN}', 'RE-YYYY-{NNNNN}'])('%s (no year) → 400 INVALID_INPUT naming the year', async (format) => {
    const { admin } = await createTeam();
    const res = await http.put('/api/settings', { numberFormats: { rechnung: format } }, { token: admin.token });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_INPUT');
    expect(res.body.error.details).toContainEqual({ field: 'numberFormats.rechnung', message: expect.stringContaining('{YYYY} or {YY}') });
    expect((await http.get('/api/settings', { token: admin.token })).body.numberFormats).toEqual({});
  });

  it('a malformed format says what is allowed', async () => {
    const { admin } = await createTeam();
    const res = await http.put('/api/settings', { numberFormats: { angebot: 'AN {YYYY} {NN}' } }, { token: admin.token });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'numberFormats.angebot', message: expect.stringContaining('exactly one counter') }]);
  });

  it('formats with {YYYY} or {YY} are accepted and used when a draft is sent', async () => {
    const { tenant, admin, member } = await createTeam();
    const res = await http.put('/api/settings', { numberFormats: { rechnung: 'R{YY}{MM}-{NNNN}', angebot: '{YYYY}/AN/{NNN}' } }, { token: admin.token });
    expect(res.status).toBe(200);
    const inv = await createDraftInvoice(tenant, member);
    const quote = await createDraftInvoice(tenant, member, { type: 'angebot' });
    const sent = await http.post(`/api/invoices/${inv.id}/send`, { to: 'a@b.at' }, { token: member.token });
    expect(sent.body.invoice.number).toBe(`R${year.slice(2)}${month}-0001`);
    const sentQuote = await http.post(`/api/invoices/${quote.id}/send`, { to: 'a@b.at' }, { token: member.token });
    expect(sentQuote.body.invoice.number).toBe(`${year}/AN/001`);
  });
});
