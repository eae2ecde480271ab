import { describe, expect, it } from 'vitest';
import { assertTransition, canTransition, INVOICE_STATUSES, TRANSITIONS, type InvoiceEvent } from '../../shared/domain/invoiceStates';
import { AppError } from '../../shared/errors';

const errorOf = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (e) {
    return e as AppError;
  }
  throw new Error('expected an error');
};

describe('invoice state machine', () => {
  it('allowed transitions', () => {
    expect(assertTransition('entwurf', 'send', { type: 'rechnung' })).toBe('offen');
    expect(assertTransition('offen', 'send', { type: 'rechnung' })).toBe('offen');
    expect(assertTransition('offen', 'pay', { type: 'rechnung', fullyPaid: false })).toBe('teilbezahlt');
    expect(assertTransition('offen', 'pay', { type: 'rechnung', fullyPaid: true })).toBe('bezahlt');
    expect(assertTransition('teilbezahlt', 'pay', { type: 'rechnung', fullyPaid: true })).toBe('bezahlt');
    expect(assertTransition('offen', 'cancel', { type: 'rechnung' })).toBe('storniert');
    expect(assertTransition('teilbezahlt', 'cancel', { type: 'rechnung' })).toBe('storniert');
    // A paid incoming invoice (a webhook creates them bezahlt) can be voided; docs/reports.md "Currency".
    expect(assertTransition('bezahlt', 'cancel', { type: 'eingangsrechnung' })).toBe('storniert');
    expect(assertTransition('offen', 'cancel', { type: 'eingangsrechnung' })).toBe('storniert');
    expect(assertTransition('entwurf', 'delete')).toBe('entwurf');
    expect(assertTransition('storniert', 'delete')).toBe('storniert');
    expect(assertTransition('entwurf', 'update')).toBe('entwurf');
    expect(assertTransition('bezahlt', 'updateMeta')).toBe('bezahlt');
    expect(assertTransition('entwurf', 'convert', { type: 'angebot' })).toBe('entwurf');
    expect(assertTransition('offen', 'convert', { type: 'angebot' })).toBe('offen');
  });

  it('refused transitions: 400 IMMUTABLE, payments 422', () => {
    const cases: Array<[Parameters<typeof assertTransition>, number, string]> = [
      [['offen', 'update'], 400, 'IMMUTABLE'],
      [['offen', 'delete'], 400, 'IMMUTABLE'],
      [['bezahlt', 'delete'], 400, 'IMMUTABLE'],
      [['teilbezahlt', 'delete'], 400, 'IMMUTABLE'],
      [['storniert', 'updateMeta'], 400, 'IMMUTABLE'],
      [['storniert', 'send'], 400, 'IMMUTABLE'],
      [['entwurf', 'cancel'], 400, 'IMMUTABLE'],
      [['bezahlt', 'cancel'], 400, 'IMMUTABLE'],
      [['bezahlt', 'cancel', { type: 'rechnung' }], 400, 'IMMUTABLE'],
      [['bezahlt', 'cancel', { type: 'angebot' }], 400, 'IMMUTABLE'],
      [['bezahlt', 'cancel', { type: 'gutschrift' }], 400, 'IMMUTABLE'],
      [['storniert', 'cancel'], 400, 'IMMUTABLE'],
      [['entwurf', 'pay', { type: 'rechnung' }], 422, 'UNPROCESSABLE'],
      [['bezahlt', 'pay', { type: 'rechnung' }], 422, 'UNPROCESSABLE'],
      [['storniert', 'pay', { type: 'rechnung' }], 422, 'UNPROCESSABLE'],
      [['offen', 'pay', { type: 'angebot' }], 422, 'UNPROCESSABLE'],
      [['entwurf', 'convert', { type: 'rechnung' }], 400, 'IMMUTABLE'],
      [['bezahlt', 'convert', { type: 'angebot' }], 400, 'IMMUTABLE'],
      [['offen', 'send', { type: 'eingangsrechnung' }], 400, 'IMMUTABLE'],
      [['offen', 'cancel', { type: 'gutschrift' }], 400, 'IMMUTABLE'],
    ];
    for (const [args, status, code] of cases) {
      const e = errorOf(() => assertTransition(...args));
      expect(e, JSON.stringify(args)).toBeInstanceOf(AppError);
      expect({ args, status: e.status, code: e.code }).toEqual({ args, status, code });
    }
  });

  it('every status has an entry; storniert is terminal except delete', () => {
    for (const s of INVOICE_STATUSES) expect(TRANSITIONS[s]).toBeDefined();
    const events: InvoiceEvent[] = ['update', 'updateMeta', 'send', 'pay', 'cancel', 'convert'];
    for (const e of events) expect(canTransition('storniert', e, 'rechnung')).toBe(false);
    expect(canTransition('storniert', 'delete', 'rechnung')).toBe(true);
  });
});
