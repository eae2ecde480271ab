import { describe, expect, it } from 'vitest';
import { computeZm } from '../../../shared/domain/tax/zm';
import { buildZmXml } from '../../../shared/formats/zm/zmXml';
import { monthPeriod, quarterPeriod } from '../../../shared/domain/tax/period';
import { taxReportReason } from '../../../shared/domain/tax/errors';

describe('ZM (recapitulative statement)', () => {
  it('sums per buyer VAT ID and kind, nets credit notes, drops buyers netting to zero', () => {
    const zm = computeZm([
      { vatId: 'de 123 456 789', kind: 'supplies', net: '1000.00' },
      { vatId: 'DE123456789', kind: 'supplies', net: '-200.00' },
      { vatId: 'DE123456789', kind: 'services', net: '300.50' },
      { vatId: 'IT12345678901', kind: 'triangular', net: '50.00' },
      { vatId: 'FR12345678901', kind: 'services', net: '100.00' },
      { vatId: 'FR12345678901', kind: 'services', net: '-100.00' },
    ]);
    expect(zm.lines).toEqual([
      { vatId: 'DE123456789', supplies: '800.00', services: '300.50', triangular: '0.00' },
      { vatId: 'IT12345678901', supplies: '0.00', services: '0.00', triangular: '50.00' },
    ]);
    expect(zm.totals).toEqual({ supplies: '800.00', services: '300.50', triangular: '50.00' });
  });

  it('writes the FinanzOnline U13 file: whole euros half-up, SOLEI for services, DREIECK for triangular', () => {
    const zm = computeZm([
      { vatId: 'DE123456789', kind: 'supplies', net: '800.49' },
      { vatId: 'DE123456789', kind: 'services', net: '300.50' },
      { vatId: 'IT12345678901', kind: 'triangular', net: '-50.00' },
    ]);
    const xml = buildZmXml({ period: quarterPeriod(2026, 3), taxNumber: '12-345/6789', zm, createdAt: new Date('2026-10-05T08:00:00Z') }).toString('latin1');
    expect(xml).toContain('<ERKLAERUNG art="U13">');
    expect(xml).toContain('<ANBRINGEN>U13</ANBRINGEN>');
    expect(xml).toContain('<ZRVON type="jahrmonat">2026-07</ZRVON>');
    expect(xml).toContain('<ZRBIS type="jahrmonat">2026-09</ZRBIS>');
    expect(xml).toContain('<ZM>\n\t\t\t<UID_MS>DE123456789</UID_MS>\n\t\t\t<SUM_BGL type="kz">800</SUM_BGL>\n\t\t</ZM>');
    expect(xml).toContain('<UID_MS>DE123456789</UID_MS>\n\t\t\t<SUM_BGL type="kz">301</SUM_BGL>\n\t\t\t<SOLEI>J</SOLEI>');
    expect(xml).toContain('<UID_MS>IT12345678901</UID_MS>\n\t\t\t<SUM_BGL type="kz">-50</SUM_BGL>\n\t\t\t<DREIECK>J</DREIECK>');
  });

  it('refuses a period with nothing to report (422 NOTHING_TO_REPORT)', () => {
    let err: unknown;
    try {
      buildZmXml({ period: monthPeriod(2026, 10), taxNumber: '123456789', zm: computeZm([]) });
    } catch (e) {
      err = e;
    }
    expect(taxReportReason(err)).toBe('NOTHING_TO_REPORT');
  });
});
