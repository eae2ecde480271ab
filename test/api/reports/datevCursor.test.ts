import { expect, it } from 'vitest';
import { createTeam } from '../../helpers/factories';
import { createSentInvoice } from '../../helpers/invoiceFactory';
import { db } from '../../../shared/db';
import { monthPeriod } from '../../../shared/domain/tax/period';
import { datevBookings } from '../../../shared/queries/reports/datev';
import { loadReportTenant } from '../../../shared/queries/reports/vatReturn';

/**
 * datevBookings reads one FETCH ahead. A consumer that stops early (the HTTP client went away)
 * leaves that FETCH in flight: the transaction must still end and its connection go back to the
 * pool, with no unhandled rejection.
 */
it('a consumer that stops after the first batch ends the transaction, a FETCH still in flight', async () => {
  const { tenant, member } = await createTeam();
  const sent = await createSentInvoice(tenant, member);
  const [year, month] = sent.issueDate.split('-').map(Number);
  const reportTenant = await loadReportTenant(db(), tenant.id);
  const pool = (db().client as { pool: { numUsed(): number } }).pool;
  const usedBefore = pool.numUsed();

  let batches = 0;
  for await (const batch of datevBookings(reportTenant, monthPeriod(year, month))) {
    expect(batch.map((b) => b.documentField1)).toContain(sent.number);
    batches++;
    break;
  }
  expect(batches).toBe(1);
  expect(pool.numUsed()).toBe(usedBefore);
  // The whole export still reads the same bookings afterwards.
  const all = [];
  for await (const batch of datevBookings(reportTenant, monthPeriod(year, month))) all.push(...batch);
  expect(all.filter((b) => b.documentField1 === sent.number).length).toBeGreaterThan(0);
  expect(pool.numUsed()).toBe(usedBefore);
});
