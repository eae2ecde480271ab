/**
 * The camt.053 and MT940 readers (docs/bank-statements.md, "Formats" and "Limits and hardening").
 */
import { describe, expect, it } from 'vitest';
import { readBankStatement } from '../../shared/formats/bankStatement';
import { readField86 } from '../../shared/formats/mt940/readMt940';
import { camt053, mt940 } from '../helpers/bankFiles';

const IBAN = 'AT611904300234573201';
const read = (s: string | Buffer) => readBankStatement(Buffer.isBuffer(s) ? s : Buffer.from(s, 'utf8'));

describe('camt.053', () => {
  it.each(['02', '04', '08'] as const)('version 001.%s: booked entries with parties, remittance and references', (version) => {
    const r = read(
      camt053({
        version,
        iban: IBAN,
        entries: [
          {
            ref: 'A1',
            amount: '1494.60',
            direction: 'credit',
            bookingDate: '2026-11-03',
            valueDate: '2026-11-04',
            name: 'Größl & Söhne KG',
            iban: 'DE89370400440532013000',
            ustrd: ['Rechnung RE-2026-0001', 'Danke'],
            endToEnd: 'E2E-1',
          },
          { ref: 'A2', amount: '20', direction: 'debit', bookingDate: '2026-11-04', name: 'Vermieter', creditorRef: 'RF18 5390 0754 7034' },
          { ref: 'A3', amount: '5.00', direction: 'credit', bookingDate: '2026-11-05', status: 'PDNG' },
        ],
      }),
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.statement).toMatchObject({ format: `camt.053.001.${version}`, accountIban: IBAN, currency: 'EUR', statementId: 'STMT-1' });
    expect(r.statement.entries).toEqual([
      {
        entryReference: 'A1',
        bookingDate: '2026-11-03',
        valueDate: '2026-11-04',
        amount: '1494.60',
        direction: 'credit',
        currency: 'EUR',
        reversal: false,
        counterpartyName: 'Größl & Söhne KG',
        counterpartyIban: 'DE89370400440532013000',
        remittance: 'Rechnung RE-2026-0001 Danke',
        creditorReference: null,
        endToEndId: 'E2E-1',
        bankText: null,
      },
      expect.objectContaining({
        entryReference: 'A2',
        amount: '20.00',
        direction: 'debit',
        counterpartyName: 'Vermieter',
        creditorReference: 'RF18 5390 0754 7034',
      }),
    ]);
    expect(r.statement.warnings).toEqual([expect.stringMatching(/entry 3: status PDNG, not booked/)]);
  });

  it('refuses hostile and malformed XML with the cause', () => {
    const xxe = `<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08">&x;</Document>`;
    expect(read(xxe)).toEqual({ ok: false, reason: expect.stringMatching(/DOCTYPE or entities.*XXE/) });
    const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><Document>&lol2;</Document>`;
    expect(read(laughs)).toEqual({ ok: false, reason: expect.stringMatching(/entity expansion/) });
    expect(read('<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>')).toEqual({
      ok: false,
      reason: expect.stringMatching(/not well-formed/),
    });
    expect(read('<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"/>')).toEqual({ ok: false, reason: expect.stringMatching(/not a camt\.053/) });
    expect(read('<Invoice/>')).toEqual({ ok: false, reason: expect.stringMatching(/not a camt\.053/) });
    const bad = camt053({ version: '08', iban: IBAN, entries: [{ ref: 'X', amount: '1e5', direction: 'credit', bookingDate: '2026-11-03' }] });
    expect(read(bad)).toEqual({ ok: false, reason: expect.stringMatching(/entry 1: Amt is not a decimal amount/) });
    const date = camt053({ version: '08', iban: IBAN, entries: [{ ref: 'X', amount: '1.00', direction: 'credit', bookingDate: '2026-02-30' }] });
    expect(read(date)).toEqual({ ok: false, reason: expect.stringMatching(/not a calendar date/) });
    expect(read(Buffer.alloc(21 * 1024 * 1024, 0x20))).toEqual({ ok: false, reason: expect.stringMatching(/neither/) });
    expect(read(`<${'a'.repeat(10)}>${' '.repeat(21 * 1024 * 1024)}`)).toEqual({ ok: false, reason: expect.stringMatching(/larger than 20 MB/) });
    expect(read('%PDF-1.7')).toEqual({ ok: false, reason: expect.stringMatching(/neither a camt\.053/) });
  });
});

describe('MT940', () => {
  it('reads :61: and the structured :86: (GVC, ?20–?29 with SEPA keys, ?31 IBAN, ?32/?33 name)', () => {
    const r = read(
      mt940({
        account: '37040044/532013000',
        entries: [
          {
            ref: 'BANKREF1',
            amount: '1494.60',
            direction: 'credit',
            bookingDate: '2026-11-03',
            valueDate: '2026-11-02',
            name: 'Größl & Söhne Kommanditgesellschaft Linz',
            iban: 'AT483200000012345864',
            ustrd: ['Rechnung RE-2026-0001 vom 1.11.2026, Kunde 4711'],
            endToEnd: 'E2E-77',
          },
          { amount: '12.5', direction: 'debit', bookingDate: '2026-11-04', free: 'KONTOFUEHRUNG NOVEMBER' },
          { amount: '3.00', direction: 'debit', bookingDate: '2026-11-04', reversal: true, free: 'STORNO' },
        ],
      }),
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    // BLZ 37040044, account 532013000: the IBAN of the ISO 13616 example.
    expect(r.statement).toMatchObject({ format: 'mt940', accountIban: 'DE89370400440532013000', currency: 'EUR', statementId: 'STARTUMSE' });
    expect(r.statement.entries[0]).toEqual({
      entryReference: 'BANKREF1',
      bookingDate: '2026-11-03',
      valueDate: '2026-11-02',
      amount: '1494.60',
      direction: 'credit',
      currency: 'EUR',
      reversal: false,
      counterpartyName: 'Größl & Söhne Kommanditgesellschaft Linz',
      counterpartyIban: 'AT483200000012345864',
      remittance: 'Rechnung RE-2026-0001 vom 1.11.2026, Kunde 4711',
      creditorReference: null,
      endToEndId: 'E2E-77',
      bankText: '166 GUTSCHR. UEBERWEISUNG',
    });
    expect(r.statement.entries[1]).toMatchObject({
      entryReference: null,
      amount: '12.50',
      direction: 'debit',
      remittance: 'KONTOFUEHRUNG NOVEMBER',
      counterpartyName: null,
    });
    expect(r.statement.entries[2]).toMatchObject({ reversal: true, direction: 'debit' });
  });

  it('reads an ISO-8859-1 file and a booking date across New Year', () => {
    const text =
      ':20:X\r\n:25:AT611904300234573201\r\n:60F:C251231EUR0,00\r\n:61:2512310102C10,00NTRFNONREF\r\n:86:166?00GUTSCHRIFT?20Zahlung für Müller?32Müller\r\n:62F:C260102EUR10,00\r\n-';
    const r = read(Buffer.from(text, 'latin1'));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.statement.accountIban).toBe('AT611904300234573201');
    expect(r.statement.entries[0]).toMatchObject({
      bookingDate: '2026-01-02',
      valueDate: '2025-12-31',
      remittance: 'Zahlung für Müller',
      counterpartyName: 'Müller',
    });
  });

  it('refuses a broken :61: or a missing account with the cause', () => {
    expect(read(':20:X\r\n:60F:C261101EUR0,00\r\n')).toEqual({ ok: false, reason: 'MT940 without an account (:25:)' });
    expect(read(':20:X\r\n:25:AT611904300234573201\r\n:60F:C261101EUR0,00\r\n:61:26110X\r\n')).toEqual({
      ok: false,
      reason: expect.stringMatching(/entry 1: the :61: line is not in the MT940 format/),
    });
  });

  it('reads a structured :86: with the SEPA keys and names split over ?32/?33', () => {
    expect(readField86('166?00GUTSCHRIFT?20EREF+E1?21SVWZ+RE-2026-0001 und RE-2026-?220002?31DE89370400440532013000?32A?33B')).toEqual({
      name: 'AB',
      iban: 'DE89370400440532013000',
      remittance: 'RE-2026-0001 und RE-2026-0002',
      endToEnd: 'E1',
      bankText: '166 GUTSCHRIFT',
    });
  });
});
