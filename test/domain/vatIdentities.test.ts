import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import Decimal from 'decimal.js';
import { isBusinessCustomer, realVatId, requiredVatIdentities, sellerHasLegalIdentity, type VatIdentityFacts } from '../../shared/domain/vatIdentities';

const facts = (o: Partial<VatIdentityFacts> = {}): VatIdentityFacts => ({
  currency: 'EUR',
  gross: new Decimal('1494.60'),
  chargesVat: true,
  reverseCharge: false,
  sellerCountry: 'AT',
  buyerCountry: 'AT',
  buyerIsBusiness: true,
  ...o,
});

describe('requiredVatIdentities (shared by send and the ebInterface writer)', () => {
  it('seller: VAT charged over EUR 400 gross; not on a small-amount invoice, not without VAT; a non-EUR total always counts', () => {
    expect(requiredVatIdentities(facts()).seller).toBe(true);
    expect(requiredVatIdentities(facts({ gross: new Decimal('400.00') })).seller).toBe(false);
    expect(requiredVatIdentities(facts({ gross: new Decimal('400.01') })).seller).toBe(true);
    expect(requiredVatIdentities(facts({ gross: new Decimal('-400.01') })).seller).toBe(true);
    expect(requiredVatIdentities(facts({ chargesVat: false, gross: new Decimal('50000') })).seller).toBe(false);
    expect(requiredVatIdentities(facts({ currency: 'USD', gross: new Decimal('1.00') })).seller).toBe(true);
    // A German Kleinbetragsrechnung ends at EUR 250 (§ 33 UStDV).
    expect(requiredVatIdentities(facts({ sellerCountry: 'DE', gross: new Decimal('250.00') })).seller).toBe(false);
    expect(requiredVatIdentities(facts({ sellerCountry: 'DE', gross: new Decimal('250.01') })).seller).toBe(true);
  });

  it('recipient UID: over EUR 10,000 gross, Austrian seller to an Austrian business; a non-EUR total always counts', () => {
    expect(requiredVatIdentities(facts({ gross: new Decimal('12000.00') })).recipientUid).toBe(true);
    expect(requiredVatIdentities(facts({ gross: new Decimal('10000.00') })).recipientUid).toBe(false);
    expect(requiredVatIdentities(facts({ gross: new Decimal('10000.01') })).recipientUid).toBe(true);
    expect(requiredVatIdentities(facts({ gross: new Decimal('-12000.00') })).recipientUid).toBe(true);
    expect(requiredVatIdentities(facts({ gross: new Decimal('12000.00'), buyerIsBusiness: false })).recipientUid).toBe(false);
    expect(requiredVatIdentities(facts({ gross: new Decimal('12000.00'), buyerCountry: 'DE' })).recipientUid).toBe(false);
    expect(requiredVatIdentities(facts({ gross: new Decimal('12000.00'), sellerCountry: 'DE' })).recipientUid).toBe(false);
    expect(requiredVatIdentities(facts({ currency: 'USD', gross: new Decimal('1.00') })).recipientUid).toBe(true);
  });

  it('reverse charge needs both UIDs whatever the amount', () => {
    expect(requiredVatIdentities(facts({ reverseCharge: true, chargesVat: false, gross: new Decimal('10.00') })).reverseCharge).toBe(true);
    expect(requiredVatIdentities(facts()).reverseCharge).toBe(false);
  });

  it('property: in EUR the seller rule is exactly "VAT charged and gross above 400 (DE: 250)", the recipient rule "above 10,000 between Austrian parties"', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -5_000_000, max: 5_000_000 }),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom('AT', 'DE'),
        fc.constantFrom('AT', 'DE', 'US'),
        (cents, chargesVat, business, seller, buyer) => {
          const gross = new Decimal(cents).dividedBy(100);
          const r = requiredVatIdentities(facts({ gross, chargesVat, buyerIsBusiness: business, sellerCountry: seller, buyerCountry: buyer }));
          expect(r.seller).toBe(chargesVat && gross.abs().greaterThan(seller === 'DE' ? 250 : 400));
          expect(r.recipientUid).toBe(gross.abs().greaterThan(10000) && business && seller === 'AT' && buyer === 'AT');
        },
      ),
    );
  });
});

describe('identities', () => {
  it('realVatId: placeholders and blanks are no VAT id', () => {
    for (const v of [null, undefined, '', '  ', '00000000', 'ATU00000000', 'atu 0000-0000']) expect(realVatId(v)).toBeNull();
    expect(realVatId('ATU12345678')).toBe('ATU12345678');
  });

  it('a business customer is one with a company name (the ebInterface signal; no stricter rule)', () => {
    expect(isBusinessCustomer({ company: 'Huber GmbH' })).toBe(true);
    for (const c of [{ company: null }, { company: '  ' }, {}, null]) expect(isBusinessCustomer(c)).toBe(false);
  });

  it('seller identity: the UID; in Germany the Steuernummer also (§ 14 Abs. 4 Nr. 2 UStG), in Austria not (§ 11 Abs. 1 Z 3 lit. i UStG)', () => {
    expect(sellerHasLegalIdentity({ vatId: 'ATU12345678', taxNumber: null, country: 'AT' })).toBe(true);
    expect(sellerHasLegalIdentity({ vatId: null, taxNumber: '12-345/6789', country: 'AT' })).toBe(false);
    expect(sellerHasLegalIdentity({ vatId: 'ATU00000000', taxNumber: null, country: 'AT' })).toBe(false);
    expect(sellerHasLegalIdentity({ vatId: null, taxNumber: '9198011310010', country: 'DE' })).toBe(true);
    expect(sellerHasLegalIdentity({ vatId: null, taxNumber: ' ', country: 'DE' })).toBe(false);
  });
});
