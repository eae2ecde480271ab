/**
 * E-mail templates for sending invoices. Tenants may override subject and body in the settings;
 * these German defaults apply otherwise. Variables are written {{name}}.
 */
export const TEMPLATE_VARIABLES = ['customerName', 'invoiceNumber', 'totalGross', 'dueDate', 'companyName', 'documentType'] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];

export interface EmailTemplates {
  emailSubject: string;
  emailBody: string;
}

export const DEFAULT_EMAIL_TEMPLATES: EmailTemplates = {
  emailSubject: '{{documentType}} {{invoiceNumber}} von {{companyName}}',
  emailBody: [
    'Sehr geehrte Damen und Herren,',
    '',
    'anbei erhalten Sie {{documentType}} {{invoiceNumber}} für {{customerName}} über {{totalGross}}.',
    'Wir bitten um Überweisung bis {{dueDate}}.',
    '',
    'Mit freundlichen Grüßen',
    '{{companyName}}',
  ].join('\n'),
};

/** Tenant overrides over the defaults, field by field (an empty override keeps the default). */
export function effectiveTemplates(overrides: Partial<EmailTemplates> | null | undefined): EmailTemplates {
  return {
    emailSubject: overrides?.emailSubject || DEFAULT_EMAIL_TEMPLATES.emailSubject,
    emailBody: overrides?.emailBody || DEFAULT_EMAIL_TEMPLATES.emailBody,
  };
}

/**
 * Replace {{name}} (whitespace inside the braces allowed) with vars[name]. Unknown variables stay
 * as written, so a typo is visible in the preview instead of silently vanishing. Values are
 * inserted as plain text; HTML escaping is the mail renderer's job.
 */
export function renderTemplate(tpl: string, vars: Partial<Record<string, string | number | null | undefined>>): string {
  return tpl.replace(/\{\{\s*([A-Za-z][A-Za-z0-9_]*)\s*\}\}/g, (whole, name: string) => {
    const v = vars[name];
    return v === undefined || v === null ? whole : String(v);
  });
}
