import { describe, expect, it } from 'vitest';
import { renderBwaPdf } from '../../../shared/formats/reportPdf/bwaPdf';
import type { BwaBlock, BwaLine, BwaReport } from '../../../shared/domain/bwa';
import { pageCount, pageTexts } from '../pdf/pdfTools';

const line = (current: string, prior = '0.00'): BwaLine => ({ current, prior, change: current, changePercent: null });

/** A BWA year with `accounts` expense accounts, 35.00 each. */
function report(accounts: number): BwaReport {
  const expenses = Array.from({ length: accounts }, (_, i) => ({
    group: `${7000 + i * 10} Aufwand ${i + 1}`,
    account: String(7000 + i * 10),
    name: `Aufwand ${i + 1}`,
    ...line('35.00'),
  }));
  const total = (35 * accounts).toFixed(2);
  const block: BwaBlock = {
    revenue: line('10000.00'),
    costOfGoods: line('0.00'),
    grossProfit: line('10000.00'),
    expenses,
    totalExpenses: line(total),
    result: line((10000 - 35 * accounts).toFixed(2)),
  };
  return {
    year: 2026,
    priorYear: 2025,
    currency: 'EUR',
    chart: 'EKR',
    months: Array.from({ length: 12 }, (_, i) => ({ month: i + 1, ...block, cumulative: block })),
    total: block,
  };
}

describe('BWA PDF', () => {
  it('a year with many expense accounts continues its table on new pages, each under the header; every row whole', async () => {
    const pdf = await renderBwaPdf({ companyName: 'Alpen Software GmbH', report: report(60), createdAt: new Date('2026-11-26T08:00:00Z') });
    const pages = pageTexts(pdf);
    // Page 1 chart and months, then the year's 66 rows: 29 fit a page, so three table pages.
    expect(pageCount(pdf)).toBe(4);
    for (const text of pages.slice(1)) expect(text).toContain('Veränderung %');
    const all = pages.join('\n');
    for (let i = 0; i < 60; i++) expect(all).toMatch(new RegExp(`Konto ${7000 + i * 10} Aufwand ${i + 1}\\s+35,00`));
    expect(all.match(/Ergebnis\s+7[.]?900,00/g)).toHaveLength(1);
    expect(all.match(/Gesamtaufwand/g)).toHaveLength(1);
  });
});
