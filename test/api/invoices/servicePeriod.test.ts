import { describe, expect, it } from 'vitest';
import iconv from 'iconv-lite';
import { useTestServer } from '../../helpers/server';
import { createTeam } from '../../helpers/factories';
import { cancelInvoice, createCustomer, createDraftInvoice, createSentInvoice, getInvoice } from '../../helpers/invoiceFactory';

/**
 * serviceEndDate: with serviceDate, the service period (Leistungszeitraum) an invoice covers.
 * The documents (PDF, ZUGFeRD, ebInterface) are tested with the formats; here the API and DATEV.
 */
const api = useTestServer();

const items = [{ description: 'Wartung März', quantity: 1, unitPrice: '300.00', taxRate: '20' }];
const march = { serviceDate: '2026-03-01', serviceEndDate: '2026-03-31' };

describe('serviceEndDate', () => {
  it('is stored with serviceDate, answered by create, read and list, and cleared by a full update of a draft', async () => {
    const { tenant, member, manager } = await createTeam();
    const customer = await createCustomer(tenant);
    const created = await api.http.post('/api/invoices', { type: 'rechnung', customerId: customer.id, items, ...march }, { token: member.token });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject(march);
    expect((await api.http.get(`/api/invoices/${created.body.id}`, { token: member.token })).body).toMatchObject(march);
    const list = await api.http.get('/api/invoices?limit=100', { token: member.token });
    expect(list.body.data.find((i: { id: string }) => i.id === created.body.id)).toMatchObject(march);

    const updated = await api.http.put(
      `/api/invoices/${created.body.id}`,
      { customerId: customer.id, items, serviceDate: '2026-04-02' },
      { token: manager.token },
    );
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ serviceDate: '2026-04-02', serviceEndDate: null });
  });

  it('needs serviceDate and must not end before it: 400 naming the field, nothing written', async () => {
    const { tenant, member, manager } = await createTeam();
    const customer = await createCustomer(tenant);
    for (const [body, message] of [
      [{ serviceEndDate: '2026-03-31' }, /needs serviceDate/],
      [{ serviceDate: '2026-03-31', serviceEndDate: '2026-03-01' }, /must not be before serviceDate/],
      [{ serviceDate: '2026-03-01', serviceEndDate: '31.03.2026' }, /.+/],
    ] as const) {
      const res = await api.http.post('/api/invoices', { type: 'rechnung', customerId: customer.id, items, ...body }, { token: member.token });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('INVALID_INPUT');
      expect(res.body.error.details).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: 'serviceEndDate', message: expect.stringMatching(message) })]),
      );
    }
    expect((await api.http.get('/api/invoices', { token: member.token })).body.data).toEqual([]);
    // the same rule on update
    const draft = await createDraftInvoice(tenant, member, { customerId: customer.id });
    const res = await api.http.put(
      `/api/invoices/${draft.id}`,
      { customerId: customer.id, items, serviceDate: '2026-03-31', serviceEndDate: '2026-03-30' },
      { token: manager.token },
    );
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'serviceEndDate', message: 'must not be before serviceDate' }]);
  });

  it('is content: immutable once sent, carried to the Storno credit note and from a quote to its invoice', async () => {
    const { tenant, member, manager } = await createTeam();
    const sent = await createSentInvoice(tenant, member, march);
    expect(sent).toMatchObject(march);
    const change = await api.http.put(`/api/invoices/${sent.id}`, { serviceEndDate: '2026-03-30' }, { token: manager.token });
    expect(change.status).toBe(400);
    expect(change.body.error.code).toBe('IMMUTABLE');
    expect(change.body.error.message).toContain('serviceEndDate');

    const { creditNoteId } = await cancelInvoice(tenant, manager, sent.id);
    expect(await getInvoice(tenant, creditNoteId!)).toMatchObject({ type: 'gutschrift', ...march });

    const quote = await createDraftInvoice(tenant, member, { type: 'angebot', ...march });
    const converted = await api.http.post(`/api/invoices/${quote.id}/convert`, {}, { token: member.token });
    expect(converted.status).toBe(201);
    expect(converted.body).toMatchObject({ type: 'rechnung', ...march });
  });

  it('DATEV: the Leistungsdatum of a service period is its last day', async () => {
    const { tenant, member, admin } = await createTeam();
    const period = await createSentInvoice(tenant, member, march);
    const day = await createSentInvoice(tenant, member, { serviceDate: '2026-03-05' });
    const [year, month] = period.issueDate.split('-').map(Number);
    const res = await api.http.get(`/api/reports/datev?year=${year}&month=${month}`, { token: admin.token });
    expect(res.status).toBe(200);
    const [, columns, ...rows] = iconv
      .decode(res.raw, 'windows-1252')
      .trimEnd()
      .split('\r\n')
      .map((line) => line.split(';').map((f) => f.replace(/^"|"$/g, '')));
    const col = (name: string) => columns.indexOf(name);
    const serviceDateOf = (number: string | null) => rows.find((r) => r[col('Belegfeld 1')] === number)![col('Leistungsdatum')];
    expect(serviceDateOf(period.number)).toBe('31032026');
    expect(serviceDateOf(day.number)).toBe('05032026');
  });
});
