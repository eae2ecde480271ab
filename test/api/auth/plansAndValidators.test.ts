import { describe, expect, it } from 'vitest';
import { planGate, planIncludes, requirePlan } from '../../../shared/plans';
import { AppError } from '../../../shared/errors';
import { createTenant } from '../../helpers/factories';
import { isValidVatId, vatIdCountry } from '../../../shared/domain/vatId';
import { isValidBic, isValidIban } from '../../../shared/domain/iban';
import { renderTemplate, effectiveTemplates, DEFAULT_EMAIL_TEMPLATES } from '../../../shared/domain/emailTemplate';

/** Plan gating and the pure validators the settings (and customers) use. */
describe('plans', () => {
  it('aiOfferDetails: pro and business, not free → 403 PLAN_LIMIT', () => {
    expect(planIncludes('free', 'aiOfferDetails')).toBe(false);
    expect(() => requirePlan('pro', 'aiOfferDetails')).not.toThrow();
    expect(() => requirePlan({ plan: 'business' }, 'aiOfferDetails')).not.toThrow();
    try {
      requirePlan({ plan: 'free' }, 'aiOfferDetails');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(AppError);
      expect(e).toMatchObject({ status: 403, code: 'PLAN_LIMIT' });
    }
  });

  it('planGate reads the tenant’s current plan from the database', async () => {
    const free = await createTenant({ plan: 'free' });
    const pro = await createTenant({ plan: 'pro' });
    const gate = planGate('aiOfferDetails');
    let called = 0;
    const next = async () => void called++;
    await gate({ state: { actor: { tenantId: pro.id } } } as never, next);
    expect(called).toBe(1);
    await expect(gate({ state: { actor: { tenantId: free.id } } } as never, next)).rejects.toMatchObject({ code: 'PLAN_LIMIT' });
    expect(called).toBe(1);
  });
});

describe('VAT ID', () => {
  it.each([
    ['ATU12345678', 'AT'],
    ['DE123456789', 'DE'],
    ['atu 123 456 78', 'AT'],
    ['FRXX123456789', 'FR'],
    ['NL123456789B01', 'NL'],
    ['EL123456789', 'GR'],
    ['ESX1234567X', 'ES'],
    ['IE1234567WA', 'IE'],
    ['BE0123456789', 'BE'],
    ['SE123456789001', 'SE'],
  ])('%s is valid (%s)', (v, country) => {
    expect(isValidVatId(v)).toBe(true);
    expect(vatIdCountry(v)).toBe(country);
  });
  it.each(['AT12345678', 'ATU1234567', 'DE12345678', 'DE1234567890', 'GR123456789', 'US123456789', '', 'NL123456789A01'])('%s is invalid', (v) => {
    expect(isValidVatId(v)).toBe(false);
    expect(vatIdCountry(v)).toBeNull();
  });
});

describe('IBAN and BIC', () => {
  it('mod-97 and country length', () => {
    expect(isValidIban('AT611904300234573201')).toBe(true);
    expect(isValidIban('DE89 3704 0044 0532 0130 00')).toBe(true);
    expect(isValidIban('AT611904300234573210')).toBe(false);
    expect(isValidIban('AT61190430023457320')).toBe(false);
    expect(isValidIban('XX')).toBe(false);
    expect(isValidBic('BKAUATWW')).toBe(true);
    expect(isValidBic('COBADEFFXXX')).toBe(true);
    expect(isValidBic('BKAU')).toBe(false);
  });
});

describe('e-mail templates', () => {
  it('renders variables, keeps unknown ones visible, merges overrides', () => {
    expect(renderTemplate('Hallo {{ customerName }}, {{invoiceNumber}} {{unknown}}', { customerName: 'Max', invoiceNumber: 'RE-1' })).toBe(
      'Hallo Max, RE-1 {{unknown}}',
    );
    const t = effectiveTemplates({ emailSubject: 'S {{invoiceNumber}}' });
    expect(t).toEqual({ emailSubject: 'S {{invoiceNumber}}', emailBody: DEFAULT_EMAIL_TEMPLATES.emailBody });
    const body = renderTemplate(DEFAULT_EMAIL_TEMPLATES.emailBody, {
      customerName: 'Max',
      invoiceNumber: 'RE-2026-00001',
      totalGross: '120.00 EUR',
      dueDate: '2026-12-31',
      companyName: 'Muster GmbH',
      documentType: 'Rechnung',
    });
    expect(body).not.toMatch(/\{\{/);
  });
});
