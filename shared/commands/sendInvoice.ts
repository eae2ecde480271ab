import Decimal from 'decimal.js';
import type { Knex } from 'knex';
import { loadDocumentInput, loadInvoiceView } from '../queries/invoices';
import { loadMailSender } from '../queries/emailDeliveries';
import { assertEInvoiceWritable } from '../documents/renderDocument';
import { chooseEmailFormat, fallsBackToPdf, isEInvoiceType, type EInvoiceFormat, type EmailFormatChoice } from '../domain/einvoiceFormats';
import { resolveEmailText } from '../queries/emailPreview';
import { audit } from '../audit';
import { AppError, invalidInput, type ErrorDetail } from '../errors';
import { assertTransition } from '../domain/invoiceStates';
import { termsOnFinalization, todayVienna, yearOf } from '../domain/dates';
import { now } from '../clock';
import { customerSnapshot, partyFrom, sellerFromTenant } from '../queries/invoices';
import type { PartyView, SellerView } from '../domain/invoiceView';
import { isBusinessCustomer, realVatId, requiredVatIdentities, sellerHasLegalIdentity, smallInvoiceLimitEur } from '../domain/vatIdentities';
import { isIntraEuReverseCharge, parsePostalAddress } from '../formats/cii/einvoiceModel';
import type { CommandContext } from './types';
import { Invoice } from '../models/Invoice';
import { queueEmailDelivery } from './emailDelivery';
import { emitEvent } from './outboundWebhooks/emitEvent';
import { lockInvoice } from './invoices/locking';
import { activeCustomer, assertRelatedInvoice, loadTenant } from './invoices/references';
import { nextInvoiceNumber } from './invoices/numbering';
import { settleLineCategories } from './invoices/lineCategories';
import { itemTaxContext } from './invoices/taxContext';
import { ecbExchangeRate, exchangeRateColumns } from './invoices/exchangeRate';
import { toEur } from '../domain/exchangeRates';
import { exchangeRateOn } from '../queries/exchangeRates';

export interface SendInput {
  to?: string;
  subject?: string;
  message?: string;
  /** What to attach; overrides the customer's einvoiceFormat (docs/e-invoicing.md, "Sending e-invoices"). */
  format?: EInvoiceFormat;
}

/**
 * POST /api/invoices/:id/send. A draft is finalized here (entwurf → offen: gapless number, issue
 * and due date, frozen customer and seller snapshots, a foreign-currency invoice's exchange rate);
 * a finalized invoice is re-sent unchanged.
 * Template variables are resolved against the finalized invoice, so a draft's preview sent back
 * mails the real number. The e-mail job goes through the outbox: queued only if this commits
 * (docs/invoices.md, "Send").
 * The attachment's format (request > customer > tenant's ZUGFeRD default > pdf) is stored on the
 * delivery; an e-invoice format the request or the customer asks for is written and checked here,
 * in this transaction, so an invoice that cannot make it is refused before anything commits.
 */
export async function sendInvoice(
  { trx, actor }: CommandContext,
  id: string,
  input: SendInput,
): Promise<{ invoiceId: string; deliveryId: string; finalized: boolean; format: EInvoiceFormat }> {
  const tenantId = actor.tenantId;
  const row = await lockInvoice(trx, tenantId, id);
  const next = assertTransition(row.status, 'send', { type: row.type });
  const finalizing = row.status === 'entwurf';
  if (input.format && input.format !== 'pdf' && !isEInvoiceType(row.type)) {
    throw invalidInput(`A ${row.type} is sent as PDF; e-invoice formats exist for invoices (rechnung) and credit notes (gutschrift) only`, [
      { field: 'format', message: `must be pdf for a ${row.type}` },
    ]);
  }
  // Read before the number is taken: the counter row stays locked until commit, so every statement
  // after it makes concurrent sends of the tenant wait longer.
  const attachment = chooseEmailFormat({
    requested: input.format,
    customerDefault: await customerEInvoiceFormat(trx, tenantId, row.customerId),
    zugferdByDefault: (await loadMailSender(trx, tenantId)).zugferdByDefault,
    invoiceType: row.type,
  });

  let number = row.number;
  let recipientEmail: string | null = row.customerSnapshot?.email ?? null;
  if (finalizing) {
    if (!row.customerId) throw invalidInput('Invoice has no customer', [{ field: 'customerId', message: 'is required to send' }]);
    const customer = await activeCustomer(trx, tenantId, row.customerId);
    const tenant = await loadTenant(trx, tenantId);
    const seller = sellerFromTenant(tenant);
    // The business day in Vienna at the (injectable) clock: 00:30 Vienna on 1 April is April.
    const issueDate = todayVienna(now());
    // A sales document in another currency is converted at the ECB rate of its issue date unless
    // the user entered one (docs/exchange-rates.md); refused without either, before the number.
    // Finalized, the rate is frozen: nothing changes it later.
    const foreignSale = (row.type === 'rechnung' || row.type === 'gutschrift') && row.currency !== 'EUR';
    const takesEcbRate = foreignSale && row.exchangeRateSource !== 'manual';
    const ecbFound = takesEcbRate ? await exchangeRateOn(trx, row.currency, issueDate) : null;
    const rate = ecbFound?.rate ?? (foreignSale ? row.exchangeRate : null);
    // Legal content is checked before the number is taken: a refused send leaves the draft as it was.
    if (row.type === 'rechnung' || row.type === 'gutschrift') {
      await assertVatIdentities(trx, row, seller, partyFrom(customerSnapshot(customer), tenant.country ?? null), rate);
      await settleLineCategories(trx, tenantId, id, itemTaxContext(tenant, customer, false));
    }
    // Without an ECB rate of the last 7 days this refuses the send, naming exchangeRate.
    const ecbRate = !takesEcbRate
      ? null
      : ecbFound
        ? { rate: ecbFound.rate, date: ecbFound.date, source: 'ecb' as const }
        : await ecbExchangeRate(trx, row.currency, issueDate, 'the issue date');
    if (row.type === 'gutschrift' && row.relatedInvoiceId) {
      // Checked on create and update already; again here for drafts written before that rule.
      await assertRelatedInvoice(trx, tenantId, row.relatedInvoiceId, { customerId: row.customerId, currency: row.currency });
    }
    const { paymentTermDays, dueDate } = termsOnFinalization(issueDate, row.paymentTermDays, customer.paymentTermDays);
    number = await nextInvoiceNumber(trx, tenantId, row.type, yearOf(issueDate), Number(issueDate.slice(5, 7)));
    recipientEmail = customer.email ?? null;
    await Invoice.query(trx)
      .where({ tenantId, id })
      .patch({
        status: next,
        number,
        issueDate,
        dueDate,
        paymentTermDays,
        ...(ecbRate ? exchangeRateColumns(ecbRate) : {}),
        customerSnapshot: customerSnapshot(customer),
        sellerSnapshot: seller,
        finalizedAt: trx.fn.now(),
        sentAt: trx.fn.now(),
        version: trx.raw('version + 1'),
        updatedAt: trx.fn.now(),
      });
  } else {
    if (!recipientEmail && row.customerId) {
      const c = await trx('customers').where({ tenantId, id: row.customerId }).first('email');
      recipientEmail = c?.email ?? null;
    }
    await Invoice.query(trx).where({ tenantId, id }).patch({ sentAt: trx.fn.now(), updatedAt: trx.fn.now() });
  }

  const to = input.to?.trim() || recipientEmail;
  if (!to) {
    throw invalidInput('No recipient: the customer has no e-mail address', [{ field: 'to', message: 'is required when the customer has no e-mail address' }]);
  }
  if (!fallsBackToPdf(attachment)) await assertAttachable(trx, tenantId, id, attachment, finalizing);
  // Subject and text default to the tenant's e-mail template, as the send dialog's preview shows;
  // either way the variables are resolved now that the number and due date exist.
  const { subject, message } = await resolveEmailText(trx, tenantId, await loadInvoiceView(trx, tenantId, id), input);

  if (finalizing) await emitEvent({ trx, actor }, 'invoice.finalized', () => loadInvoiceView(trx, tenantId, id));
  const { deliveryId } = await queueEmailDelivery({ trx, actor }, { invoiceId: id, to, subject, message, attachment });
  await audit(trx, actor, {
    action: finalizing ? 'invoice.finalized' : 'invoice.resent',
    entityType: 'invoice',
    entityId: id,
    data: { number, deliveryId, from: row.status, to: next, format: attachment.format },
  });
  return { invoiceId: id, deliveryId, finalized: finalizing, format: attachment.format };
}

async function customerEInvoiceFormat(trx: Knex.Transaction, tenantId: string, customerId: string | null): Promise<EInvoiceFormat | null> {
  if (!customerId) return null;
  const c: { einvoiceFormat: EInvoiceFormat | null } | undefined = await trx('customers').where({ tenantId, id: customerId }).first('einvoiceFormat');
  return c?.einvoiceFormat ?? null;
}

/**
 * The chosen e-invoice is written from the invoice as this transaction sees it (finalized: number,
 * snapshots) by the same writer and rule checks as GET …/xrechnung, …/ubl, …/ebinterface and
 * …/zugferd (assertEInvoiceWritable); a refusal is their 400 INVALID_INPUT with `violations`, and
 * rolls the send back: no number taken, nothing queued.
 */
async function assertAttachable(trx: Knex.Transaction, tenantId: string, id: string, choice: EmailFormatChoice, finalizing: boolean): Promise<void> {
  if (choice.format === 'pdf') return;
  try {
    assertEInvoiceWritable(choice.format, await loadDocumentInput(trx, tenantId, id));
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const why =
      choice.source === 'request'
        ? `format "${choice.format}" was requested`
        : `the customer's einvoiceFormat is "${choice.format}"; send with format "pdf" to mail the PDF alone`;
    throw new AppError(
      err.code,
      err.status,
      `The invoice cannot be sent as ${choice.format} (${why}); it was ${finalizing ? 'not finalized' : 'not sent'}: ${err.message}`,
      err.details ?? [{ field: 'format', message: `${choice.format} is not possible for this invoice` }],
      err.headers,
      err.extra,
    );
  }
}

const FIX_SELLER = 'set it in the settings (PUT /api/settings)';

/**
 * The VAT identities a sales invoice or credit note must show (requiredVatIdentities, the rule
 * the ebInterface writer applies), for the parties as the documents will show them. The PDF this
 * send e-mails is the legal invoice, so a missing identity is refused here (400 INVALID_INPUT
 * naming the setting or customer field), before a number is taken. Quotes are not checked.
 */
async function assertVatIdentities(trx: Knex.Transaction, row: Invoice, seller: SellerView, buyer: PartyView, rate: string | null): Promise<void> {
  const rates = (await trx('invoiceItems').where({ tenantId: row.tenantId, invoiceId: row.id }).select('taxRate')).map(
    (i: { taxRate: string }) => new Decimal(i.taxRate),
  );
  const sellerCountry = (seller.country || '').toUpperCase();
  const countryOf = (p: PartyView) => parsePostalAddress(p.address, { country: p.country, vatId: p.vatId, fallbackCountry: sellerCountry }).country;
  const sellerParty = { vatId: seller.vatId ?? null, taxNumber: seller.taxNumber ?? null, country: countryOf(seller) };
  // The EUR limits (§ 11 Abs. 6 and Abs. 1 Z 3 lit. j UStG) compare the gross in EUR: a foreign
  // document's at the rate it is finalized with.
  const currency = rate ? 'EUR' : String(row.currency || '').toUpperCase();
  const gross = new Decimal(rate ? toEur(row.totalGross, rate) : row.totalGross).abs();
  const required = requiredVatIdentities({
    currency,
    gross,
    chargesVat: rates.some((r) => r.greaterThan(0)),
    reverseCharge: rates.some((r) => r.isZero()) && isIntraEuReverseCharge(seller, buyer),
    sellerCountry: sellerParty.country,
    buyerCountry: countryOf(buyer),
    buyerIsBusiness: isBusinessCustomer(buyer),
  });
  const over = (limit: string) =>
    currency === 'EUR'
      ? `the gross total ${gross.toFixed(2)} EUR${rate ? ` (${row.currency} at ${new Decimal(rate).toString()} per EUR)` : ''} is over EUR ${limit}`
      : `the gross total is in ${currency}, which cannot be compared with the EUR ${limit} limit without an exchange rate`;

  const details: ErrorDetail[] = [];
  if (required.seller && !sellerHasLegalIdentity(sellerParty)) {
    const limit = smallInvoiceLimitEur(sellerParty.country).toFixed(0);
    details.push(
      sellerParty.country === 'DE'
        ? {
            field: 'settings.vatId',
            message: `the invoice charges VAT and ${over(limit)}, so it must show the seller's USt-IdNr. (vatId) or Steuernummer (taxNumber) (§ 14 Abs. 4 Nr. 2 UStG, § 33 UStDV); ${FIX_SELLER}`,
          }
        : {
            field: 'settings.vatId',
            message: `the invoice charges VAT and ${over(limit)}, so it must show the seller's VAT id (UID, § 11 Abs. 1 Z 3 lit. i UStG; Art. 226 Z 3 Directive 2006/112/EC); ${FIX_SELLER}`,
          },
    );
  }
  if (required.recipientUid && !realVatId(buyer.vatId)) {
    details.push({
      field: 'customer.vatId',
      message: `${over('10,000')} and the customer (${row.customerId}) is an Austrian business (it has a company name), so the invoice must show the customer's VAT id (UID, § 11 Abs. 1 Z 3 lit. j UStG); add vatId to the customer`,
    });
  }
  if (required.reverseCharge) {
    const why =
      'a 0 % line to a business with a VAT id of another EU member state is a reverse-charge supply, which must show both VAT ids (§ 11 Abs. 1a UStG, § 14a Abs. 1 UStG DE, Art. 226 Z 3 and 4 Directive 2006/112/EC)';
    if (!realVatId(seller.vatId)) details.push({ field: 'settings.vatId', message: `${why}: the seller has none; ${FIX_SELLER}` });
    if (!realVatId(buyer.vatId)) details.push({ field: 'customer.vatId', message: `${why}: the customer (${row.customerId}) has none` });
  }
  if (details.length) throw invalidInput('The invoice lacks VAT identities the law requires on it; it was not finalized', details);
}
