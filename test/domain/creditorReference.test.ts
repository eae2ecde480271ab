import { describe, expect, it } from 'vitest';
import { creditorReferenceFor, findCreditorReferences, isCreditorReference, printReference } from '../../shared/domain/creditorReference';

describe('creditor reference (ISO 11649)', () => {
  it('checks the standard example RF18 5390 0754 7034', () => {
    expect(isCreditorReference('RF18 5390 0754 7034')).toBe(true);
    expect(isCreditorReference('RF18539007547034')).toBe(true);
    expect(isCreditorReference('RF19539007547034')).toBe(false);
    expect(isCreditorReference('RF18')).toBe(false);
  });

  it('derives a reference from an invoice number, dropping separators', () => {
    expect(creditorReferenceFor('539007547034')).toBe('RF18539007547034');
    const ref = creditorReferenceFor('RE-2026-0042')!;
    expect(ref).toMatch(/^RF\d{2}RE20260042$/);
    expect(isCreditorReference(ref)).toBe(true);
    expect(creditorReferenceFor('re/2026/0042')).toBe(ref);
    expect(creditorReferenceFor('---')).toBeNull();
    expect(creditorReferenceFor('A'.repeat(22))).toBeNull();
    expect(isCreditorReference(creditorReferenceFor('A'.repeat(21))!)).toBe(true);
  });

  it('finds references in remittance text, printed in groups or not', () => {
    expect(findCreditorReferences('Zahlung RF18 5390 0754 7034 Rechnung Mai')).toEqual(['RF18539007547034']);
    expect(findCreditorReferences('rf18539007547034/other')).toEqual(['RF18539007547034']);
    expect(findCreditorReferences('RF19539007547034 invalid')).toEqual([]);
    expect(printReference('RF18539007547034')).toBe('RF18 5390 0754 7034');
  });
});
