import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { cancelInvoice, createDraftInvoice } from '../../helpers/invoiceFactory';
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

  it('a new format that meets a number an old one issued: the send (here the cancel) is 409, nothing is numbered twice, the series stays gapless', async () => {
    const { tenant, admin, manager } = await createTeam();
    const first = await createDraftInvoice(tenant, admin);
    expect((await http.post(`/api/invoices/${first.id}/send`, {}, { token: admin.token })).body.invoice.number).toBe(`RE-${year}-00001`);
    // Invoices move to another series; credit notes take the invoices' old one. The formats do not meet each other…
    expect(
      (await http.put('/api/settings', { numberFormats: { rechnung: 'X{YYYY}-{NNNNN}', gutschrift: 'RE-{YYYY}-{NNNNN}' } }, { token: admin.token })).status,
    ).toBe(200);
    const second = await createDraftInvoice(tenant, admin);
    expect((await http.post(`/api/invoices/${second.id}/send`, {}, { token: admin.token })).body.invoice.number).toBe(`X${year}-00002`);
    // …but the first credit note would be RE-<year>-00001, which the first invoice has.
    const cancel = await http.post(`/api/invoices/${second.id}/cancel`, undefined, { token: manager.token });
    expect(cancel.status).toBe(409);
    expect(cancel.body.error).toMatchObject({
      code: 'DUPLICATE',
      details: [{ field: 'numberFormats.gutschrift', message: expect.stringContaining(`RE-${year}-00001`) }],
    });
    expect((await http.get(`/api/invoices/${second.id}`, { token: admin.token })).body.status).toBe('offen');
    // Fixed in the settings, the credit note takes the series' first number: nothing was used up.
    expect((await http.put('/api/settings', { numberFormats: { gutschrift: 'GS-{YYYY}-{NNNNN}' } }, { token: admin.token })).status).toBe(200);
    expect((await http.post(`/api/invoices/${second.id}/cancel`, undefined, { token: manager.token })).body.creditNote.number).toBe(`GS-${year}-00001`);
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

  it('formats of two types that could give the same number → 400 on each format sent, nothing saved', async () => {
    const { admin } = await createTeam();
    const same = '{YYYY}-{NNNN}';
    const res = await http.put('/api/settings', { numberFormats: { rechnung: same, gutschrift: same, angebot: same } }, { token: admin.token });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_INPUT');
    const fields = res.body.error.details.map((d: { field: string }) => d.field);
    expect(new Set(fields)).toEqual(new Set(['numberFormats.rechnung', 'numberFormats.angebot', 'numberFormats.gutschrift']));
    expect(res.body.error.details).toContainEqual({
      field: 'numberFormats.rechnung',
      message: expect.stringContaining('numberFormats.gutschrift ({YYYY}-{NNNN}, as sent)'),
    });
    expect((await http.get('/api/settings', { token: admin.token })).body.numberFormats).toEqual({});
  });

  it('a counter past its width counts: {YYYY}-{NNNN} against {YYYY}-{NNN} is refused', async () => {
    const { admin } = await createTeam();
    const res = await http.put('/api/settings', { numberFormats: { rechnung: '{YYYY}-{NNNN}', angebot: '{YYYY}-{NNN}' } }, { token: admin.token });
    expect(res.status).toBe(400);
  });

  it('compared with the stored formats and the defaults of types without one', async () => {
    const { admin } = await createTeam();
    expect((await http.put('/api/settings', { numberFormats: { rechnung: 'R{YYYY}-{NNNN}' } }, { token: admin.token })).status).toBe(200);
    const clash = await http.put('/api/settings', { numberFormats: { gutschrift: 'R{YYYY}-{NNNN}' } }, { token: admin.token });
    expect(clash.status).toBe(400);
    expect(clash.body.error.details).toEqual([
      { field: 'numberFormats.gutschrift', message: expect.stringContaining('numberFormats.rechnung (R{YYYY}-{NNNN}, as saved)') },
    ]);
    const clashDefault = await http.put('/api/settings', { numberFormats: { angebot: 'GS-{YYYY}-{NNNNN}' } }, { token: admin.token });
    expect(clashDefault.body.error.details).toEqual([
      { field: 'numberFormats.angebot', message: expect.stringContaining('numberFormats.gutschrift (GS-{YYYY}-{NNNNN}, its default)') },
    ]);
    expect((await http.get('/api/settings', { token: admin.token })).body.numberFormats).toEqual({ rechnung: 'R{YYYY}-{NNNN}' });
  });

  it('digits-only series that differ in a fixed leading digit are accepted; an invoice and its Storno get different numbers', async () => {
    const { tenant, admin, member, manager } = await createTeam();
    const res = await http.put(
      '/api/settings',
      { numberFormats: { rechnung: '1{YY}{NNNN}', angebot: '2{YY}{NNNN}', gutschrift: '3{YY}{NNNN}' } },
      { token: admin.token },
    );
    expect(res.status).toBe(200);
    const inv = await createDraftInvoice(tenant, member);
    const sent = await http.post(`/api/invoices/${inv.id}/send`, { to: 'a@b.at' }, { token: member.token });
    expect(sent.body.invoice.number).toBe(`1${year.slice(2)}0001`);
    const { creditNoteId } = await cancelInvoice(tenant, manager, inv.id);
    const credit = await http.get(`/api/invoices/${creditNoteId}`, { token: member.token });
    expect(credit.body.number).toBe(`3${year.slice(2)}0001`);
  });
});
