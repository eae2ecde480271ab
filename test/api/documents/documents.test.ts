import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { cancelInvoice, createCustomer, createDraftInvoice, createEInvoiceCustomer, createSentInvoice, recordPayment } from '../../helpers/invoiceFactory';
import { startWorkers, type RunningWorkers } from '../../../workers/worker';
import { pdfAttachments, pdfText } from '../../helpers/pdf';
import { validateXml } from '../../helpers/xmllint';
import { needsOfficialFiles } from '../../helpers/officialFiles';
import { CII_XSD, CII_XSD_FILE, EBI_XSD, EBI_XSD_FILE } from '../../formats/cii/fixtures';
import { db } from '../../../shared/db';
import { addDays, todayVienna } from '../../../shared/domain/dates';
import { DEFAULT_EMAIL_TEMPLATES } from '../../../shared/domain/emailTemplate';

const official = needsOfficialFiles([CII_XSD_FILE, EBI_XSD_FILE]);

let server: Awaited<ReturnType<typeof startTestServer>>;
let workers: RunningWorkers;

beforeAll(async () => {
  server = await startTestServer({ RENDER_WAIT_MS: '30000' });
  // The documents queue runs in sandboxed child processes, as in production.
  workers = await startWorkers({ queues: ['documents'], schedule: false });
});
afterAll(async () => {
  await workers.close();
  await server.close();
});

/** YYYY-MM-DD as the e-mail prints it (DD.MM.YYYY). */
const german = (date: string) => date.split('-').reverse().join('.');

async function seller() {
  const team = await createTeam({ country: 'AT', name: 'Alpen Software GmbH', address: 'Mariahilfer Straße 1\n1060 Wien' });
  const customer = await createEInvoiceCustomer(team.tenant);
  return { ...team, customer };
}

describe('invoice documents rendered by workers', () => {
  it('PDF of a finalized invoice: rendered once per version, then served from the cache with an ETag', async () => {
    const { tenant, admin, viewer, customer } = await seller();
    const inv = await createSentInvoice(tenant, admin, { customerId: customer.id });
    const http = client(server.url, { token: viewer.token });
    const res = await http.get(`/api/invoices/${inv.id}/pdf`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toContain(`${inv.number}.pdf`);
    const text = pdfText(res.raw);
    expect(text).toContain(inv.number!);
    expect(text).toContain('Größl & Söhne KG');
    expect(text).toContain('ATU87654321');
    expect(text).toContain('Alpen Software GmbH');

    const again = await http.get(`/api/invoices/${inv.id}/pdf`);
    expect(again.raw.equals(res.raw)).toBe(true);
    const etag = again.headers.get('etag')!;
    expect((await http.get(`/api/invoices/${inv.id}/pdf`, { headers: { 'If-None-Match': etag } })).status).toBe(304);
    const rows = await db()('documents').where({ invoiceId: inv.id, kind: 'pdf' });
    expect(rows).toHaveLength(1);
  });

  it('documents show the invoice as issued: a payment recorded later does not change the PDF', async () => {
    const { tenant, admin, customer } = await seller();
    const inv = await createSentInvoice(tenant, admin, { customerId: customer.id });
    const http = client(server.url, { token: admin.token });
    const pay = await http.post(`/api/invoices/${inv.id}/payments`, { amount: '400.00', date: inv.issueDate, method: 'bank_transfer' });
    expect(pay.status).toBe(201);
    const res = await http.get(`/api/invoices/${inv.id}/pdf`);
    const text = pdfText(res.raw);
    expect(text).not.toContain('Bereits bezahlt');
    expect(text).toContain('1.494,60');
  });

  it('a draft renders marked ENTWURF; changing the draft renders a new version; e-invoices refuse drafts', async () => {
    const { tenant, admin, customer } = await seller();
    const draft = await createDraftInvoice(tenant, admin, { customerId: customer.id });
    const http = client(server.url, { token: admin.token });
    const first = await http.get(`/api/invoices/${draft.id}/pdf`);
    expect(first.status).toBe(200);
    expect(pdfText(first.raw)).toContain('ENTWURF');

    const put = await http.put(`/api/invoices/${draft.id}`, {
      type: 'rechnung',
      customerId: customer.id,
      items: [{ description: 'Geänderte Position Übergröße', quantity: 2, unitPrice: '50.00', taxRate: '20' }],
    });
    expect(put.status).toBe(200);
    const second = await http.get(`/api/invoices/${draft.id}/pdf`);
    expect(pdfText(second.raw)).toContain('Geänderte Position Übergröße');
    expect(await db()('documents').where({ invoiceId: draft.id, kind: 'pdf' })).toHaveLength(2);

    for (const kind of ['zugferd', 'ebinterface']) {
      const res = await http.get(`/api/invoices/${draft.id}/${kind}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('INVALID_INPUT');
      expect(res.body.error.message).toMatch(/draft/i);
    }
  });

  it.skipIf(!official)('ZUGFeRD: PDF/A-3 with factur-x.xml that validates against the CII XSD', async () => {
    const { tenant, admin, customer } = await seller();
    const inv = await createSentInvoice(tenant, admin, { customerId: customer.id });
    const res = await client(server.url, { token: admin.token }).get(`/api/invoices/${inv.id}/zugferd`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    const files = pdfAttachments(res.raw);
    expect(Object.keys(files)).toEqual(['factur-x.xml']);
    const xml = files['factur-x.xml'].toString('utf8');
    expect(xml).toContain(`<ram:ID>${inv.number}</ram:ID>`);
    expect(xml).toContain('urn:cen.eu:en16931:2017');
    const v = validateXml(xml, CII_XSD);
    expect(v.errors).toBe('');
    expect(v.valid).toBe(true);
    expect(res.raw.toString('latin1')).toMatch(/pdfaid:part>3</);
  });

  it.skipIf(!official)('ebInterface 6.1 XML validates against its XSD', async () => {
    const { tenant, admin, customer } = await seller();
    const inv = await createSentInvoice(tenant, admin, { customerId: customer.id });
    const res = await client(server.url, { token: admin.token }).get(`/api/invoices/${inv.id}/ebinterface`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/xml/);
    const v = validateXml(res.raw, EBI_XSD);
    expect(v.errors).toBe('');
    expect(res.body).toContain(`<InvoiceNumber>${inv.number}</InvoiceNumber>`);
    expect(res.body).toContain('xmlns="http://www.ebinterface.at/schema/6p1/"');
  });

  it('an e-invoice the data does not allow (seller without UID: BR-S-02) is 400 with the violated rules, not 500; the PDF still renders', async () => {
    const team = await createTeam({ country: 'AT', name: 'Ohne UID e.U.', address: 'Hauptplatz 1\n8010 Graz', vatId: null, taxNumber: '12-345/6789' });
    const customer = await createEInvoiceCustomer(team.tenant);
    // A Kleinbetragsrechnung (≤ EUR 400) may be issued without the seller's UID; EN 16931 still wants it.
    const items = [{ description: 'Beratung', quantity: '1', unit: 'h', unitPrice: '100.00', taxRate: '20' }];
    const inv = await createSentInvoice(team.tenant, team.admin, { customerId: customer.id, items });
    const http = client(server.url, { token: team.viewer.token });
    const res = await http.get(`/api/invoices/${inv.id}/zugferd`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_INPUT', status: 400, message: expect.stringMatching(/BR-/) });
    expect(res.body.error.violations).toEqual(expect.arrayContaining([expect.objectContaining({ rule: expect.stringMatching(/^BR-/) })]));
    // Asked again: the same answer (the failed job was removed, not left to answer stale).
    expect((await http.get(`/api/invoices/${inv.id}/zugferd`)).status).toBe(400);
    expect((await http.get(`/api/invoices/${inv.id}/pdf`)).status).toBe(200);
  });

  it('email-preview resolves the tenant template; another tenant gets 404', async () => {
    const { tenant, admin, customer } = await seller();
    const inv = await createSentInvoice(tenant, admin, { customerId: customer.id });
    const res = await client(server.url, { token: admin.token }).get(`/api/invoices/${inv.id}/email-preview`);
    expect(res.status).toBe(200);
    expect(res.body.to).toBe('buchhaltung@groessl.example');
    expect(res.body.subject).toBe(`Rechnung ${inv.number} von Alpen Software GmbH`);
    expect(res.body.body).toContain('Größl & Söhne KG');
    expect(res.body.body).toContain('1.494,60');
    expect(res.body.body).not.toMatch(/\{\{/);

    const other = await createTeam();
    for (const p of ['pdf', 'zugferd', 'ebinterface', 'email-preview']) {
      const r = await client(server.url, { token: other.admin.token }).get(`/api/invoices/${inv.id}/${p}`);
      expect(r.status).toBe(404);
    }
  });

  it('email-preview uses the template the tenant set via PUT /api/settings, every variable substituted', async () => {
    const { tenant, admin, customer } = await seller();
    const inv = await createSentInvoice(tenant, admin, { customerId: customer.id });
    const put = await client(server.url, { token: admin.token }).put('/api/settings', {
      templates: {
        emailSubject: 'Ihre {{documentType}} Nr. {{ invoiceNumber }} – {{companyName}}',
        emailBody: 'Hallo {{customerName}},\nbitte zahlen Sie {{totalGross}} bis {{dueDate}}.\n{{companyName}}\n{{unbekannt}}',
      },
    });
    expect(put.status).toBe(200);

    const res = await client(server.url, { token: admin.token }).get(`/api/invoices/${inv.id}/email-preview`);
    expect(res.status).toBe(200);
    const [y, m, d] = inv.dueDate!.split('-');
    expect(res.body).toEqual({
      to: 'buchhaltung@groessl.example',
      subject: `Ihre Rechnung Nr. ${inv.number} – Alpen Software GmbH`,
      // The company name wins over the contact person; an unknown variable stays visible as written.
      body: `Hallo Größl & Söhne KG,\nbitte zahlen Sie 1.494,60 € bis ${d}.${m}.${y}.\nAlpen Software GmbH\n{{unbekannt}}`,
    });

    // POST …/send without subject/message uses the same resolved text.
    const sent = await client(server.url, { token: admin.token }).post(`/api/invoices/${inv.id}/send`, {});
    expect(sent.status).toBe(202);
    const delivery = await db()('deliveries').where({ id: sent.body.delivery.id }).first();
    expect([delivery.subject, delivery.message]).toEqual([res.body.subject, res.body.body]);
  });

  it('draft: the preview keeps {{invoiceNumber}} and shows the due date send sets; sent back unchanged it mails the real number and due date', async () => {
    const { tenant, admin } = await seller();
    const customer = await createCustomer(tenant, { name: 'Term30', email: 'term30@example.com', paymentTermDays: 30 });
    const draft = await createDraftInvoice(tenant, admin, {
      customerId: customer.id,
      items: [{ description: 'Beratung', quantity: 1, unitPrice: '100.00', taxRate: '20' }],
    });
    const api = client(server.url, { token: admin.token });
    // The due date sending today sets: the customer's 30 days, not the default 14.
    const due = german(addDays(todayVienna(), 30));

    const preview = await api.get(`/api/invoices/${draft.id}/email-preview`);
    expect(preview.status).toBe(200);
    expect(preview.body.to).toBe('term30@example.com');
    expect(preview.body.subject).toBe('Rechnung {{invoiceNumber}} von Alpen Software GmbH');
    expect(preview.body.body).toContain(`anbei erhalten Sie Rechnung {{invoiceNumber}} für Term30 über 120,00 €.\nWir bitten um Überweisung bis ${due}.`);
    expect(preview.body.body + preview.body.subject).not.toContain('ENTWURF');

    const sent = await api.post(`/api/invoices/${draft.id}/send`, { to: preview.body.to, subject: preview.body.subject, message: preview.body.body });
    expect(sent.status).toBe(202);
    const inv = sent.body.invoice;
    expect(inv.number).toMatch(/^RE-\d{4}-\d{5}$/);
    expect(inv.dueDate).toBe(addDays(inv.issueDate, 30));
    const delivery = await db()('deliveries').where({ id: sent.body.delivery.id }).first();
    expect(delivery.subject).toBe(`Rechnung ${inv.number} von Alpen Software GmbH`);
    expect(delivery.message).toBe(preview.body.body.replace('{{invoiceNumber}}', inv.number));
    expect(delivery.message).toContain(`Wir bitten um Überweisung bis ${german(inv.dueDate)}.`);

    // Once sent, the preview is fully resolved and is what the e-mail said.
    const after = await api.get(`/api/invoices/${draft.id}/email-preview`);
    expect([after.body.subject, after.body.body]).toEqual([delivery.subject, delivery.message]);
  });

  it('default texts per type: only an invoice asks for payment; a quote names its validity, a credit note the refund', async () => {
    const { tenant, admin, customer } = await seller();
    const api = client(server.url, { token: admin.token });
    const preview = async (id: string) => (await api.get(`/api/invoices/${id}/email-preview`)).body;

    const invoice = await createSentInvoice(tenant, admin, { customerId: customer.id });
    expect((await preview(invoice.id)).body).toContain(`Wir bitten um Überweisung bis ${german(invoice.dueDate!)}.`);

    const { creditNoteId } = await cancelInvoice(tenant, admin, invoice.id);
    const credit = await preview(creditNoteId!);
    const creditNumber = (await api.get(`/api/invoices/${creditNoteId}`)).body.number;
    expect(credit.subject).toBe(`Gutschrift ${creditNumber} von Alpen Software GmbH`);
    expect(credit.body).toContain(`anbei erhalten Sie die Gutschrift ${creditNumber} für Größl & Söhne KG über 1.494,60 €.`);
    expect(credit.body).toContain('Der Betrag wird Ihnen gutgeschrieben bzw. erstattet');
    expect(credit.body).not.toMatch(/Überweisung|bitten um/);

    const quote = await createSentInvoice(tenant, admin, { type: 'angebot', customerId: customer.id });
    const offer = await preview(quote.id);
    expect(offer.subject).toBe(`Angebot ${quote.number} von Alpen Software GmbH`);
    expect(offer.body).toContain(`anbei erhalten Sie unser Angebot ${quote.number} für Größl & Söhne KG über 1.494,60 €.`);
    expect(offer.body).toContain(`Das Angebot ist gültig bis ${german(quote.dueDate!)}.`);
    expect(offer.body).not.toMatch(/Überweisung|bitten um/);

    // Send without subject/message uses the same text per type.
    const sent = await api.post(`/api/invoices/${creditNoteId}/send`, {});
    expect(sent.status).toBe(202);
    const delivery = await db()('deliveries').where({ id: sent.body.delivery.id }).first();
    expect([delivery.subject, delivery.message]).toEqual([credit.subject, credit.body]);

    // A tenant template applies to every type; the invoice default saved back unchanged (as a
    // settings form would) is no override and keeps the defaults per type.
    await api.put('/api/settings', { templates: { emailSubject: DEFAULT_EMAIL_TEMPLATES.emailSubject, emailBody: DEFAULT_EMAIL_TEMPLATES.emailBody } });
    expect(await preview(creditNoteId!)).toEqual(credit);
    await api.put('/api/settings', { templates: { emailBody: 'Eigener Text zu {{documentType}} {{invoiceNumber}}' } });
    expect((await preview(creditNoteId!)).body).toBe(`Eigener Text zu Gutschrift ${creditNumber}`);
    expect((await preview(quote.id)).body).toBe(`Eigener Text zu Angebot ${quote.number}`);
  });

  it('send resolves only the known variables in the given text, once, as plain text', async () => {
    const { tenant, admin } = await seller();
    // A name that looks like a template must reach the e-mail as written, also via the draft preview.
    const customer = await createCustomer(tenant, { name: 'Kontakt', company: '{{dueDate}} {{invoiceNumber}} AG', email: 'tricky@example.com' });
    const draft = await createDraftInvoice(tenant, admin, { customerId: customer.id });
    const api = client(server.url, { token: admin.token });

    const preview = await api.get(`/api/invoices/${draft.id}/email-preview`);
    expect(preview.body.body).toContain('für {{customerName}} über 1.494,60 €');

    const sent = await api.post(`/api/invoices/${draft.id}/send`, {
      subject: '{{ documentType }} {{invoiceNumber}} {{foo}}',
      message: `${preview.body.body}\n{{foo}} {{ Foo }} {{constructor}} {{toString}} {{__proto__}} {{ totalGross }} {{dueDate`,
    });
    expect(sent.status).toBe(202);
    const inv = sent.body.invoice;
    const delivery = await db()('deliveries').where({ id: sent.body.delivery.id }).first();
    expect(delivery.subject).toBe(`Rechnung ${inv.number} {{foo}}`);
    expect(delivery.message).toContain(`für {{dueDate}} {{invoiceNumber}} AG über 1.494,60 €.\nWir bitten um Überweisung bis ${german(inv.dueDate)}.`);
    expect(delivery.message.endsWith('\n{{foo}} {{ Foo }} {{constructor}} {{toString}} {{__proto__}} 1.494,60 € {{dueDate')).toBe(true);
  });
});

/** The factur-x.xml of a ZUGFeRD PDF. */
const facturX = (pdf: Buffer) => pdfAttachments(pdf)['factur-x.xml'].toString('utf8');
/** Text of a CII element (first occurrence), e.g. cii(xml, 'ram:DuePayableAmount'). */
const cii = (xml: string, name: string) => xml.match(new RegExp(`<${name}[^>]*>([^<]*)</${name}>`))?.[1];

describe('documents show the invoice as issued, whatever happened to it since', () => {
  it.skipIf(!official)('a cancelled invoice (unpaid or partly paid) still exports ZUGFeRD and ebInterface: 200, XSD-valid, the issued amounts', async () => {
    const { tenant, admin, customer } = await seller();
    const http = client(server.url, { token: admin.token });
    const unpaid = await createSentInvoice(tenant, admin, { customerId: customer.id });
    const partly = await createSentInvoice(tenant, admin, { customerId: customer.id });
    await recordPayment(tenant, admin, partly.id, { amount: '500.00' });
    for (const inv of [unpaid, partly]) {
      await cancelInvoice(tenant, admin, inv.id);
      const view = (await http.get(`/api/invoices/${inv.id}`)).body;
      expect(view).toMatchObject({ status: 'storniert', amountDue: '0.00' });

      const zugferd = await http.get(`/api/invoices/${inv.id}/zugferd`);
      expect(zugferd.status).toBe(200);
      const xml = facturX(zugferd.raw);
      expect(validateXml(xml, CII_XSD).errors).toBe('');
      expect(cii(xml, 'ram:GrandTotalAmount')).toBe('1494.60');
      expect(cii(xml, 'ram:DuePayableAmount')).toBe('1494.60');
      expect(xml).not.toContain('TotalPrepaidAmount');
      expect(pdfText(zugferd.raw)).toMatch(new RegExp(`Rechnung ${inv.number}\\s+STORNIERT`));

      const ebi = await http.get(`/api/invoices/${inv.id}/ebinterface`);
      expect(ebi.status).toBe(200);
      expect(validateXml(ebi.raw, EBI_XSD).errors).toBe('');
      expect(ebi.body).toContain('<PayableAmount>1494.60</PayableAmount>');
      expect(ebi.body).not.toContain('PrepaidAmount');
    }
  });

  it.skipIf(!official)('a paid invoice: PDF and ZUGFeRD say what they said before the payment (no "beglichen" next to XML asking for payment)', async () => {
    const { tenant, admin, customer } = await seller();
    const http = client(server.url, { token: admin.token });
    // Payments keep the version, so the cache holds whatever the first request rendered: one
    // invoice rendered before its payment, a twin rendered only after it must give the same documents.
    const renderedFirst = await createSentInvoice(tenant, admin, { customerId: customer.id });
    const paidFirst = await createSentInvoice(tenant, admin, { customerId: customer.id });
    const documents = async (inv: typeof paidFirst) => {
      const pdf = await http.get(`/api/invoices/${inv.id}/pdf`);
      const zugferd = await http.get(`/api/invoices/${inv.id}/zugferd`);
      expect([pdf.status, zugferd.status]).toEqual([200, 200]);
      const same = (text: string) => text.split(inv.number!).join('<number>');
      return { pdf: same(pdfText(pdf.raw)), zugferd: same(pdfText(zugferd.raw)), xml: same(facturX(zugferd.raw)) };
    };
    const before = await documents(renderedFirst);
    for (const inv of [renderedFirst, paidFirst]) await recordPayment(tenant, admin, inv.id, { amount: '1494.60' });
    expect((await http.get(`/api/invoices/${paidFirst.id}`)).body).toMatchObject({ status: 'bezahlt', amountDue: '0.00' });
    const after = await documents(paidFirst);

    expect(after).toEqual(before);
    expect(await documents(renderedFirst)).toEqual(before);
    expect(after.pdf).not.toContain('beglichen');
    expect(after.zugferd.replace(/\s+/g, ' ')).toContain('Bitte überweisen Sie 1.494,60 €');
    expect(cii(after.xml, 'ram:DuePayableAmount')).toBe('1494.60');
    expect(validateXml(after.xml.split('<number>').join(paidFirst.number!), CII_XSD).errors).toBe('');
  });

  it.skipIf(!official)(
    'the Storno credit note states the original supply date, not the cancellation day (PDF, CII BT-72, ebInterface Delivery/Date)',
    async () => {
      const { tenant, admin, customer } = await seller();
      const http = client(server.url, { token: admin.token });
      const inv = await createSentInvoice(tenant, admin, { customerId: customer.id });
      expect(inv.serviceDate).toBeNull();
      // Issued on 15.01.2026 without a service date: its Leistungsdatum is the issue date.
      await db()('invoices').where({ id: inv.id }).update({ issueDate: '2026-01-15' });
      const original = await http.get(`/api/invoices/${inv.id}/pdf`);
      expect(pdfText(original.raw)).toMatch(/Leistungsdatum\s+15\.01\.2026/);

      const { creditNoteId } = await cancelInvoice(tenant, admin, inv.id);
      const credit = (await http.get(`/api/invoices/${creditNoteId}`)).body;
      expect(credit).toMatchObject({ type: 'gutschrift', status: 'bezahlt', issueDate: todayVienna(), serviceDate: '2026-01-15', serviceEndDate: null });

      const pdf = pdfText((await http.get(`/api/invoices/${creditNoteId}/pdf`)).raw);
      expect(pdf).toMatch(/Leistungsdatum\s+15\.01\.2026/);
      expect(pdf).not.toContain('beglichen');

      const zugferd = await http.get(`/api/invoices/${creditNoteId}/zugferd`);
      expect(zugferd.status).toBe(200);
      const xml = facturX(zugferd.raw);
      expect(validateXml(xml, CII_XSD).errors).toBe('');
      expect(cii(xml, 'ram:TypeCode')).toBe('381');
      expect(xml).toMatch(/<ram:ActualDeliverySupplyChainEvent>\s*<ram:OccurrenceDateTime>\s*<udt:DateTimeString format="102">20260115</);
      // Settled by offset, with no payment record: as issued, the credit note shows its full amount.
      expect(cii(xml, 'ram:DuePayableAmount')).toBe('1494.60');

      const ebi = await http.get(`/api/invoices/${creditNoteId}/ebinterface`);
      expect(ebi.status).toBe(200);
      expect(validateXml(ebi.raw, EBI_XSD).errors).toBe('');
      expect(ebi.body).toMatch(/<Delivery>\s*<Date>2026-01-15<\/Date>/);
    },
  );
});
