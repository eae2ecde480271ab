/**
 * E-mail templates for sending invoices, quotes and credit notes. Tenants may override subject
 * and body in the settings (one pair for every document type); the German defaults below,
 * one per type, apply otherwise. Variables are written {{name}}.
 */
export const TEMPLATE_VARIABLES = ['customerName', 'invoiceNumber', 'totalGross', 'dueDate', 'companyName', 'documentType'] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];
export type TemplateVars = Partial<Record<TemplateVariable, string | number | null | undefined>>;

export interface EmailTemplates {
  emailSubject: string;
  emailBody: string;
}

/** Document types that are e-mailed; anything else (an incoming invoice's preview) uses the rechnung text. */
export type EmailDocumentType = 'rechnung' | 'angebot' | 'gutschrift';

const defaultBody = (...lines: string[]) => ['Sehr geehrte Damen und Herren,', '', ...lines, '', 'Mit freundlichen Grüßen', '{{companyName}}'].join('\n');

const DEFAULT_SUBJECT = '{{documentType}} {{invoiceNumber}} von {{companyName}}';

/**
 * Defaults per type: only an invoice asks for payment. A credit note's amount is owed to the
 * customer; a quote's due date is its validity (the PDF prints it as "gültig bis" too).
 */
export const DEFAULT_EMAIL_TEMPLATES_BY_TYPE: Record<EmailDocumentType, EmailTemplates> = {
  rechnung: {
    emailSubject: DEFAULT_SUBJECT,
    emailBody: defaultBody(
      'anbei erhalten Sie {{documentType}} {{invoiceNumber}} für {{customerName}} über {{totalGross}}.',
      'Wir bitten um Überweisung bis {{dueDate}}.',
    ),
  },
  gutschrift: {
    emailSubject: DEFAULT_SUBJECT,
    emailBody: defaultBody(
      'anbei erhalten Sie die Gutschrift {{invoiceNumber}} für {{customerName}} über {{totalGross}}.',
      'Der Betrag wird Ihnen gutgeschrieben bzw. erstattet; eine Zahlung Ihrerseits ist nicht erforderlich.',
    ),
  },
  angebot: {
    emailSubject: DEFAULT_SUBJECT,
    emailBody: defaultBody(
      'anbei erhalten Sie unser Angebot {{invoiceNumber}} für {{customerName}} über {{totalGross}}.',
      'Das Angebot ist gültig bis {{dueDate}}. Wir freuen uns auf Ihren Auftrag.',
    ),
  },
};

/**
 * The invoice text: what GET /api/settings shows as the defaults, and what every type used before
 * there were defaults per type.
 */
export const DEFAULT_EMAIL_TEMPLATES: EmailTemplates = DEFAULT_EMAIL_TEMPLATES_BY_TYPE.rechnung;

/**
 * Tenant overrides over the defaults of a document type, field by field. An empty override keeps
 * the default, and so does one equal to the invoice default: GET /api/settings shows that text
 * as the current template, and a settings form that saves it back unchanged must not turn every
 * quote and credit note into a payment request.
 */
export function effectiveTemplates(overrides: Partial<EmailTemplates> | null | undefined, type: string = 'rechnung'): EmailTemplates {
  const defaults = DEFAULT_EMAIL_TEMPLATES_BY_TYPE[type as EmailDocumentType] ?? DEFAULT_EMAIL_TEMPLATES;
  const pick = (field: keyof EmailTemplates) => {
    const o = overrides?.[field];
    return o && o !== DEFAULT_EMAIL_TEMPLATES[field] ? o : defaults[field];
  };
  return { emailSubject: pick('emailSubject'), emailBody: pick('emailBody') };
}

const KNOWN_VARIABLES: ReadonlySet<string> = new Set(TEMPLATE_VARIABLES);

/** A {{name}} placeholder, whitespace inside the braces allowed; the name is group 1. */
export const PLACEHOLDER = /\{\{\s*([A-Za-z][A-Za-z0-9_]*)\s*\}\}/g;

/** The known variables a text names (a value holding one would be read as a template if resolved again). */
export const knownVariablesIn = (text: string): string[] => [...text.matchAll(PLACEHOLDER)].map((m) => m[1]).filter((n) => KNOWN_VARIABLES.has(n));

/**
 * Replace {{name}} with vars[name] for the known variables (TEMPLATE_VARIABLES) only. Anything
 * else stays as written: an unknown name (a typo shows in the preview) or a known one without a
 * value (a draft's number, filled in later). One pass, so an inserted value such as a customer
 * named "{{dueDate}}" is never read as a template. HTML escaping is the mail renderer's job.
 */
export function renderTemplate(tpl: string, vars: TemplateVars): string {
  return tpl.replace(PLACEHOLDER, (whole, name: string) => {
    // Own known keys only: "{{constructor}}" must not print Object's source.
    if (!KNOWN_VARIABLES.has(name) || !Object.hasOwn(vars, name)) return whole;
    const v = vars[name as TemplateVariable];
    return v === undefined || v === null ? whole : String(v);
  });
}
