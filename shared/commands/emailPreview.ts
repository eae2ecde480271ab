import type { Knex } from 'knex';
import { effectiveTemplates, renderTemplate } from '../domain/emailTemplate';
import type { InvoiceView } from '../domain/invoiceView';
import { formatDate, formatMoney } from '../formats/pdf/format';
import { notFound } from '../errors';
import { addDays, DEFAULT_PAYMENT_TERM_DAYS, todayVienna } from '../domain/dates';

const DOCUMENT_TYPE: Record<string, string> = { rechnung: 'Rechnung', angebot: 'Angebot', gutschrift: 'Gutschrift', eingangsrechnung: 'Eingangsrechnung' };

/**
 * The e-mail for an invoice from the tenant's templates (settings.templates) with the variables
 * {{customerName}}, {{invoiceNumber}}, {{totalGross}}, {{dueDate}}, {{companyName}}, {{documentType}} resolved.
 * Used by GET …/email-preview to pre-fill the send dialog and as the default of POST …/send.
 */
export async function emailForInvoice(knex: Knex, tenantId: string, invoice: InvoiceView) {
  const tenant = await knex('tenants').where({ id: tenantId }).first('name', 'settings');
  if (!tenant) throw notFound('Tenant');
  const templates = effectiveTemplates(tenant.settings?.templates);
  const vars = {
    customerName: invoice.customer?.company || invoice.customer?.name || '',
    invoiceNumber: invoice.number ?? 'ENTWURF',
    totalGross: formatMoney(invoice.totalGross, invoice.currency),
    // A draft has no due date yet: preview the one sending today would set.
    dueDate: formatDate(invoice.dueDate ?? addDays(todayVienna(), invoice.paymentTermDays ?? DEFAULT_PAYMENT_TERM_DAYS)),
    companyName: tenant.name,
    documentType: DOCUMENT_TYPE[invoice.type] ?? 'Dokument',
  };
  return {
    to: invoice.customer?.email ?? null,
    subject: renderTemplate(templates.emailSubject, vars),
    body: renderTemplate(templates.emailBody, vars),
  };
}
