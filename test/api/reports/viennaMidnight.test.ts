import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import iconv from 'iconv-lite';
import { resetClock, setClock } from '../../../shared/clock';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createCustomer, createSentInvoice } from '../../helpers/invoiceFactory';

/**
 * Month boundaries are Vienna calendar days: an invoice finalized at 2026-03-31T22:30:00Z is
 * issued on 1 April in Vienna (00:30 CEST) and belongs to April's U30 and DATEV batch, although
 * it is still 31 March in UTC. One finalized at 21:30Z (23:30 in Vienna) stays in March. The
 * injectable clock (shared/clock.ts) sets "now" for sendInvoice; nothing is backdated.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;

beforeAll(async () => {
  server = await startTestServer();
});
afterEach(() => resetClock());
afterAll(async () => {
  await server?.close();
});

async function finalizedAt(tenant: { id: string }, customerId: string, instant: string, unitPrice: string) {
  setClock(() => Date.parse(instant));
  try {
    return await createSentInvoice(tenant, null, { customerId, items: [{ description: 'Leistung', quantity: '1', unitPrice, taxRate: '20' }] });
  } finally {
    resetClock();
  }
}

describe('an invoice finalized around midnight in Vienna', () => {
  it('22:30Z on 31 March is 1 April: April U30 and DATEV, not March', async () => {
    const team = await createTeam({ country: 'AT', taxNumber: '12-345/6789' });
    const c = await createCustomer(team.tenant, { name: 'Kunde' });
    const april = await finalizedAt(team.tenant, c.id, '2026-03-31T22:30:00Z', '100.00');
    const march = await finalizedAt(team.tenant, c.id, '2026-03-31T21:30:00Z', '50.00');
    expect(april.issueDate).toBe('2026-04-01');
    expect(march.issueDate).toBe('2026-03-31');

    const http = client(server.url, { token: team.viewer.token });
    const m = await http.get('/api/reports/ust?year=2026&month=3');
    const a = await http.get('/api/reports/ust?year=2026&month=4');
    expect(m.body.kennzahlen).toMatchObject({ '000': '50.00', '022': '50.00', '095': '10.00' });
    expect(a.body.kennzahlen).toMatchObject({ '000': '100.00', '022': '100.00', '095': '20.00' });

    const rows = (raw: Buffer) =>
      iconv
        .decode(raw, 'windows-1252')
        .trimEnd()
        .split('\r\n')
        .slice(2)
        .map((l) => l.split(';'));
    const aprilRows = rows((await http.get('/api/reports/datev?year=2026&month=4')).raw);
    expect(aprilRows.map((r) => [r[0], r[9], r[10].replace(/"/g, '')])).toEqual([['120,00', '0104', april.number]]);
    const marchRows = rows((await http.get('/api/reports/datev?year=2026&month=3')).raw);
    expect(marchRows.map((r) => [r[0], r[9]])).toEqual([['60,00', '3103']]);
  });
});
