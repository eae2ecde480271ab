import { describe, expect, it } from 'vitest';
import { DEFAULT_EMAIL_TEMPLATES, DEFAULT_EMAIL_TEMPLATES_BY_TYPE, effectiveTemplates, renderTemplate } from '../../shared/domain/emailTemplate';
import { termsOnFinalization } from '../../shared/domain/dates';

describe('e-mail templates', () => {
  it('resolves only the known variables, once; unknown names and missing values stay as written', () => {
    const vars = { customerName: '{{companyName}} $& $1', companyName: 'Muster GmbH', invoiceNumber: null };
    expect(
      renderTemplate('{{ customerName }} / {{companyName}} / {{invoiceNumber}} / {{foo}} / {{constructor}} / {{toString}} / {{hasOwnProperty}}', vars),
    ).toBe('{{companyName}} $& $1 / Muster GmbH / {{invoiceNumber}} / {{foo}} / {{constructor}} / {{toString}} / {{hasOwnProperty}}');
    // Extra keys in vars are not variables either.
    expect(renderTemplate('{{secret}}', { secret: 'x' } as never)).toBe('{{secret}}');
  });

  it('defaults per type: only the invoice asks for payment; the invoice default is the one settings show', () => {
    expect(DEFAULT_EMAIL_TEMPLATES).toBe(DEFAULT_EMAIL_TEMPLATES_BY_TYPE.rechnung);
    expect(DEFAULT_EMAIL_TEMPLATES.emailBody).toContain('Wir bitten um Überweisung bis {{dueDate}}.');
    expect(DEFAULT_EMAIL_TEMPLATES_BY_TYPE.gutschrift.emailBody).not.toMatch(/Überweisung|dueDate/);
    expect(DEFAULT_EMAIL_TEMPLATES_BY_TYPE.angebot.emailBody).toContain('gültig bis {{dueDate}}');
    expect(DEFAULT_EMAIL_TEMPLATES_BY_TYPE.angebot.emailBody).not.toContain('Überweisung');
    expect(effectiveTemplates(null, 'eingangsrechnung')).toEqual(DEFAULT_EMAIL_TEMPLATES);
    expect(effectiveTemplates(undefined)).toEqual(DEFAULT_EMAIL_TEMPLATES);
  });

  it('tenant overrides apply to every type, field by field; an override equal to the invoice default is none', () => {
    expect(effectiveTemplates({ emailSubject: 'S {{invoiceNumber}}' }, 'gutschrift')).toEqual({
      emailSubject: 'S {{invoiceNumber}}',
      emailBody: DEFAULT_EMAIL_TEMPLATES_BY_TYPE.gutschrift.emailBody,
    });
    expect(effectiveTemplates({ emailBody: 'B' }, 'angebot').emailBody).toBe('B');
    expect(effectiveTemplates({ emailBody: '' }, 'angebot').emailBody).toBe(DEFAULT_EMAIL_TEMPLATES_BY_TYPE.angebot.emailBody);
    expect(effectiveTemplates({ ...DEFAULT_EMAIL_TEMPLATES }, 'gutschrift')).toEqual(DEFAULT_EMAIL_TEMPLATES_BY_TYPE.gutschrift);
    expect(effectiveTemplates({ ...DEFAULT_EMAIL_TEMPLATES }, 'rechnung')).toEqual(DEFAULT_EMAIL_TEMPLATES);
  });
});

describe('termsOnFinalization', () => {
  it('invoice term, else customer term, else 14 days; 0 is a term', () => {
    expect(termsOnFinalization('2026-11-26', 7, 30)).toEqual({ paymentTermDays: 7, dueDate: '2026-12-03' });
    expect(termsOnFinalization('2026-11-26', null, 30)).toEqual({ paymentTermDays: 30, dueDate: '2026-12-26' });
    expect(termsOnFinalization('2026-11-26', undefined, null)).toEqual({ paymentTermDays: 14, dueDate: '2026-12-10' });
    expect(termsOnFinalization('2026-12-31', 0, 30)).toEqual({ paymentTermDays: 0, dueDate: '2026-12-31' });
  });
});
