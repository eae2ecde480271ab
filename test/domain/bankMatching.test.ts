import { describe, expect, it } from 'vitest';
import { decideMatch, dedupKeys, germanIbanOf, type MatchCandidate, type MatchableEntry, type StatementEntry } from '../../shared/domain/bankStatements';
import { creditorReferenceFor } from '../../shared/domain/creditorReference';

const inv = (over: Partial<MatchCandidate>): MatchCandidate => ({
  invoiceId: 'i',
  number: null,
  currency: 'EUR',
  amountDue: '100.00',
  partyNames: [],
  partyIbans: [],
  ...over,
});
const entry = (over: Partial<MatchableEntry>): MatchableEntry => ({
  direction: 'credit',
  amount: '100.00',
  currency: 'EUR',
  counterpartyName: null,
  counterpartyIban: null,
  remittance: null,
  creditorReference: null,
  endToEndId: null,
  ...over,
});

describe('decideMatch (docs/bank-statements.md, "Matching")', () => {
  const a = inv({ invoiceId: 'a', number: 'RE-2026-0001', amountDue: '100.00', partyNames: ['Muster GmbH'] });
  const b = inv({ invoiceId: 'b', number: 'RE-2026-0010', amountDue: '100.00', partyNames: ['Muster GmbH'], partyIbans: ['AT48 3200 0000 1234 5864'] });
  const c = inv({ invoiceId: 'c', number: 'RE-2026-0002', amountDue: '250.00', partyNames: ['Other AG'] });

  it('an RF reference first, then an invoice number as a whole token', () => {
    expect(decideMatch(entry({ creditorReference: creditorReferenceFor('RE-2026-0002') }), [a, b, c])).toEqual({
      kind: 'match',
      invoiceId: 'c',
      amount: '100.00',
      rule: 'reference',
      overpaid: null,
    });
    expect(decideMatch(entry({ remittance: 'Rg. RE-2026-0001 danke' }), [a, b, c])).toMatchObject({ invoiceId: 'a', rule: 'number' });
    // RE-2026-0001 is not RE-2026-00010's prefix match.
    expect(decideMatch(entry({ remittance: 'RE-2026-00010' }), [a, c])).toMatchObject({ kind: 'none' });
    // Split over two remittance lines.
    expect(decideMatch(entry({ remittance: 'RE-2026- 0002' }), [a, c])).toMatchObject({ invoiceId: 'c', rule: 'number' });
    expect(decideMatch(entry({ remittance: 'RE-2026-0001 RE-2026-0002' }), [a, c])).toEqual({
      kind: 'none',
      reason: 'the remittance names several open invoices',
    });
  });

  it('a referenced invoice is paid up to its amount due; the rest is reported', () => {
    expect(decideMatch(entry({ amount: '300.00', remittance: 'RE-2026-0002' }), [c])).toEqual({
      kind: 'match',
      invoiceId: 'c',
      amount: '250.00',
      rule: 'number',
      overpaid: '50.00',
    });
    expect(decideMatch(entry({ amount: '50.00', remittance: 'RE-2026-0002' }), [c])).toMatchObject({ amount: '50.00', overpaid: null });
  });

  it('exact amount due from the payer only when exactly one invoice fits', () => {
    expect(decideMatch(entry({ amount: '250.00', counterpartyName: 'OTHER AG.' }), [a, b, c])).toMatchObject({ invoiceId: 'c', rule: 'amountAndPayer' });
    expect(decideMatch(entry({ counterpartyName: 'Muster GmbH' }), [a, b, c])).toEqual({
      kind: 'none',
      reason: 'several open invoices of this party have this amount due',
    });
    expect(decideMatch(entry({ counterpartyIban: 'AT483200000012345864' }), [a, b, c])).toMatchObject({ invoiceId: 'b', rule: 'amountAndPayer' });
    expect(decideMatch(entry({ amount: '250.00', counterpartyName: 'Someone else' }), [a, b, c])).toMatchObject({ kind: 'none' });
  });

  it('never across currencies', () => {
    expect(decideMatch(entry({ currency: 'USD', remittance: 'RE-2026-0001' }), [a])).toEqual({ kind: 'none', reason: 'no open invoice in this currency' });
  });
});

describe('dedupKeys', () => {
  const e = (over: Partial<StatementEntry>): StatementEntry => ({
    entryReference: null,
    bookingDate: '2026-11-03',
    valueDate: null,
    amount: '10.00',
    direction: 'credit',
    currency: 'EUR',
    reversal: false,
    counterpartyName: null,
    counterpartyIban: null,
    remittance: 'x',
    creditorReference: null,
    endToEndId: null,
    bankText: null,
    ...over,
  });
  it('the bank reference, else the entry data with an ordinal among equals', () => {
    const keys = dedupKeys('AT61', [e({ entryReference: 'R1' }), e({}), e({}), e({ remittance: 'y' })]);
    expect(keys[0]).toBe('ref|AT61|R1');
    expect(keys[2]).toBe(`${keys[1]}#2`);
    expect(new Set(keys).size).toBe(4);
    expect(dedupKeys('AT61', [e({})])[0]).toBe(keys[1]);
  });
  it('converts a German BLZ/account to its IBAN', () => {
    expect(germanIbanOf('37040044', '532013000')).toBe('DE89370400440532013000');
  });
});
