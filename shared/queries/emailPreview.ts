import type { Knex } from 'knex';
import { effectiveTemplates, knownVariablesIn, renderTemplate, TEMPLATE_VARIABLES, type TemplateVars } from '../domain/emailTemplate';
import type { InvoiceView } from '../domain/invoiceView';
import { formatDate, formatMoney } from '../formats/pdf/format';
import { notFound } from '../errors';
import { termsOnFinalization, todayVienna } from '../domain/dates';
import { now } from '../clock';

const DOCUMENT_TYPE: Record<string, string> = { rechnung: 'Rechnung', angebot: 'Angebot', gutschrift: 'Gutschrift', eingangsrechnung: 'Eingangsrechnung' };

async function tenantTemplates(knex: Knex, tenantId: string, type: string) {
  const tenant = await knex('tenants').where({ id: tenantId }).first('name', 'settings');
  if (!tenant) throw notFound('Tenant');
  return { companyName: tenant.name as string, templates: effectiveTemplates(tenant.settings?.templates, type) };
}

/**
 * The template variables of an invoice. A draft has no number yet (send assigns it, gapless), so
 * {{invoiceNumber}} gets no value; its due date is the one sending it today would set.
 */
async function templateVariables(knex: Knex, tenantId: string, invoice: InvoiceView, companyName: string): Promise<TemplateVars> {
  let dueDate = invoice.dueDate;
  if (invoice.status === 'entwurf') {
    const customer = invoice.customerId ? await knex('customers').where({ tenantId, id: invoice.customerId }).first('paymentTermDays') : null;
    dueDate = termsOnFinalization(todayVienna(now()), invoice.paymentTermDays, customer?.paymentTermDays).dueDate;
  }
  return {
    customerName: invoice.customer?.company || invoice.customer?.name || '',
    invoiceNumber: invoice.status === 'entwurf' ? null : invoice.number,
    totalGross: formatMoney(invoice.totalGross, invoice.currency),
    // Only an incoming invoice (never sent) can lack one: keep the variable rather than invent a date.
    dueDate: dueDate ? formatDate(dueDate) : null,
    companyName,
    documentType: DOCUMENT_TYPE[invoice.type] ?? 'Dokument',
  };
}

/**
 * The text the preview shows is sent back and resolved again at send. A value that itself holds a
 * placeholder ("{{dueDate}}" in a company name) would then be read as one; leave that variable
 * for send to fill in, where it is inserted once, as plain text.
 */
function safeForSecondPass(vars: TemplateVars): TemplateVars {
  const out: TemplateVars = { ...vars };
  for (const name of TEMPLATE_VARIABLES) {
    const v = out[name];
    if (v == null) continue;
    if (knownVariablesIn(String(v)).length) out[name] = null;
  }
  return out;
}

/**
 * GET …/email-preview: the e-mail for an invoice from the tenant's templates for its type
 * (settings.templates, else the default per type) with {{customerName}}, {{invoiceNumber}},
 * {{totalGross}}, {{dueDate}}, {{companyName}}, {{documentType}} resolved, to pre-fill the send
 * dialog. For a draft, {{invoiceNumber}} stays as written: POST …/send resolves the text it is
 * given after assigning the number, so the dialog sent back unchanged mails the real one.
 */
export async function emailForInvoice(knex: Knex, tenantId: string, invoice: InvoiceView) {
  const { companyName, templates } = await tenantTemplates(knex, tenantId, invoice.type);
  const vars = safeForSecondPass(await templateVariables(knex, tenantId, invoice, companyName));
  return {
    to: invoice.customer?.email ?? null,
    subject: renderTemplate(templates.emailSubject, vars),
    body: renderTemplate(templates.emailBody, vars),
  };
}

/**
 * POST …/send: subject and text of the e-mail, the given ones or else the tenant's template, with
 * the variables resolved against the invoice as it is now (after finalization: its number and due
 * date). Text that is not a known variable is left alone.
 */
export async function resolveEmailText(
  knex: Knex,
  tenantId: string,
  invoice: InvoiceView,
  given: { subject?: string; message?: string },
): Promise<{ subject: string; message: string }> {
  const { companyName, templates } = await tenantTemplates(knex, tenantId, invoice.type);
  const vars = await templateVariables(knex, tenantId, invoice, companyName);
  return {
    subject: renderTemplate(given.subject?.trim() || templates.emailSubject, vars),
    message: renderTemplate(given.message ?? templates.emailBody, vars),
  };
}
