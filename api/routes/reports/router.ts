import { constants as zlibConstants } from 'node:zlib';
import { createRouter, type AppContext } from '../../routing';
import { db } from '../../../shared/db';
import { runInTransaction } from '../../../shared/outbox';
import { invalidInput } from '../../../shared/errors';
import { parseTaxPeriod, type TaxPeriod } from '../../../shared/domain/tax/period';
import {
  assertU30Tenant,
  elsterXml,
  loadReportTenant,
  requireTaxNumber,
  u30Report,
  u30XmlFor,
  vatReturnReport,
} from '../../../shared/queries/reports/vatReturn';
import { datevExportStream, datevFileName } from '../../../shared/queries/reports/datev';
import { bwaReport } from '../../../shared/queries/reports/bwa';
import { zmReport, zmXmlFor } from '../../../shared/queries/reports/zm';
import { loadSubmission } from '../../../shared/queries/reports/submissions';
import { obtainReportPdf, reportFingerprint } from '../../../shared/documents/reportPdf';
import { submitVatReturn } from '../../../shared/commands/submitVatReturn';
import { resolveSubmission, type ResolveSubmissionInput } from '../../../shared/commands/reports/resolveSubmission';
import { bwaQuery, bwaView, periodQuery, resolveBody, submissionAccepted, submissionView, submitBody, vatReturnView, zmView } from './schemas';

/**
 * Tax and management reports (docs/reports.md): U30 VAT return (json, pdf, FinanzOnline xml) and
 * its portal submission, DATEV Buchungsstapel, ELSTER UStVA, recapitulative statement (ZM), BWA. Viewers and above read; only
 * admins submit to the tax portal.
 */
export const { router: reportsRouter, add } = createRouter('/api/reports', 'Reports');

type Format = 'json' | 'pdf' | 'xml';
type PeriodQuery = { year: number; month?: number; quarter?: number; format?: Format };

/** ?format wins; otherwise the Accept header (application/pdf, application/xml, text/xml); default json. */
function formatOf(ctx: AppContext<unknown, { format?: Format }>, allowed: Format[]): Format {
  const q = ctx.input.query.format;
  if (q) return q;
  const accept = ctx.get('Accept').toLowerCase();
  if (allowed.includes('pdf') && accept.includes('application/pdf')) return 'pdf';
  if (allowed.includes('xml') && /(application|text)\/xml/.test(accept)) return 'xml';
  return allowed[0];
}

const periodOf = (q: PeriodQuery): TaxPeriod => parseTaxPeriod({ year: q.year, month: q.month, quarter: q.quarter });
const errors = {
  400: { description: 'Invalid period or format; tax number missing; report not available for the tenant country (INVALID_INPUT)' },
  403: { description: 'Role too low' },
  422: {
    description:
      'The books cannot be expressed in this report (error.reason: e.g. UNSUPPORTED_TAX_RATE, NEGATIVE_KENNZAHL in the XML, FOREIGN_CURRENCY naming ' +
      'the non-EUR documents, ACCOUNT_LENGTH for DATEV)',
  },
};

add<unknown, PeriodQuery>({
  method: 'get',
  path: '/ust',
  auth: 'viewer',
  summary: 'VAT return (Austrian U30) for a month or quarter: json, pdf (form) or xml (FinanzOnline upload file)',
  description:
    'Sales = finalized rechnung minus gutschrift by issueDate; input tax from incoming invoices (not entwurf/storniert) by invoiceDate. ' +
    'German tenants get their UStVA Kennzahlen as json; the xml for them is /api/reports/elster.',
  query: periodQuery(['json', 'pdf', 'xml']),
  responses: {
    200: {
      description:
        'By ?format or Accept: the JSON report; the U30 form as application/pdf; or the FinanzOnline upload file as application/xml (ISO-8859-1, bases only, XSD per period)',
      content: { 'application/json': { schema: vatReturnView }, 'application/pdf': {}, 'application/xml': {} },
    },
    ...errors,
    503: { description: 'The PDF takes longer than RENDER_WAIT_MS; retry after Retry-After seconds' },
  },
  handler: async (ctx) => {
    const q = ctx.input.query;
    const period = periodOf(q);
    const format = formatOf(ctx, ['json', 'pdf', 'xml']);
    const tenant = await loadReportTenant(db(), ctx.state.actor.tenantId);
    if (format === 'json') {
      ctx.body = await vatReturnReport(db(), tenant, period);
      return;
    }
    assertU30Tenant(tenant);
    if (format === 'xml') requireTaxNumber(tenant, 'The U30 XML');
    const report = await u30Report(db(), tenant, period);
    if (format === 'xml') {
      ctx.set('Content-Type', 'application/xml; charset=ISO-8859-1');
      ctx.set('Content-Disposition', `attachment; filename="U30_${period.label}.xml"`);
      ctx.body = u30XmlFor(tenant, report);
      return;
    }
    const pdf = await obtainReportPdf(
      {
        tenantId: tenant.id,
        report: 'u30',
        year: period.year,
        ...(period.kind === 'month' ? { month: period.month } : { quarter: period.quarter }),
        fingerprint: reportFingerprint(tenant, report),
      },
      ctx.config.renderWaitMs,
    );
    ctx.set('Content-Type', 'application/pdf');
    ctx.set('Content-Disposition', `inline; filename="U30_${period.label}.pdf"`);
    ctx.body = pdf;
  },
});

add({
  method: 'post',
  path: '/ust/submit',
  auth: 'admin',
  summary: 'Submit the U30 of a month or quarter to FinanzOnline (test or live); runs as a background job',
  description:
    'Needs tax portal credentials in the settings (400 otherwise). A month is filed live once: a live submission whose months overlap a live ' +
    'submission that is queued, submitted or accepted (a month and its quarter overlap) is 409 DUPLICATE naming it; resubmission: true files a ' +
    'corrected return, but never while an overlapping live submission is still in flight or has an unresolved unknown outcome. ' +
    "Test mode uploads with FinanzOnline's test flag (checked, never filed) and never blocks. Follow the submission with GET /api/reports/ust/submissions/{id}.",
  body: submitBody,
  responses: {
    202: { description: 'Queued', schema: submissionAccepted },
    ...errors,
    409: {
      description:
        'An overlapping live submission exists (DUPLICATE; error.conflictingSubmission names it): accepted → send resubmission: true; in flight → wait; outcome unknown → resolve it first',
    },
  },
  handler: async (ctx) => {
    const body = ctx.input.body as { year: number; month?: number; quarter?: number; mode: 'test' | 'live'; resubmission?: boolean };
    const actor = ctx.state.actor;
    const result = await runInTransaction((trx) => submitVatReturn({ trx, actor }, body));
    ctx.status = 202;
    ctx.set('Location', `/api/reports/ust/submissions/${result.submissionId}`);
    ctx.body = { submissionId: result.submissionId, status: result.status };
  },
});

add({
  method: 'get',
  path: '/ust/submissions/:id',
  auth: 'viewer',
  summary: 'State of a U30 submission: queued | submitted | accepted | rejected, with the portal answer',
  description:
    'outcomeUnknown: true means a live upload was interrupted after it left and the job has stopped: status stays submitted until an admin ' +
    'checks the FinanzOnline DataBox and resolves it with POST /api/reports/ust/submissions/{id}/resolve.',
  responses: { 200: { description: 'Submission', schema: submissionView }, 404: { description: 'No such submission for this tenant' } },
  handler: async (ctx) => {
    ctx.body = await loadSubmission(db(), ctx.state.actor.tenantId, (ctx.input.params as { id: string }).id);
  },
});

add<ResolveSubmissionInput, unknown, { id: string }>({
  method: 'post',
  path: '/ust/submissions/:id/resolve',
  auth: 'admin',
  summary: 'Record the outcome of a live submission whose upload outcome is unknown (after checking the FinanzOnline DataBox)',
  description:
    'accepted: the return arrived (the period counts as filed); rejected: it did not arrive (the period can be filed again). ' +
    'Only for live submissions with outcomeUnknown: true; nothing is sent to the portal.',
  body: resolveBody,
  responses: {
    200: { description: 'The resolved submission', schema: submissionView },
    400: { description: 'The submission has no unknown outcome to resolve, or invalid body (INVALID_INPUT)' },
    403: { description: 'Role too low (admin only)' },
    404: { description: 'No such submission for this tenant' },
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    const { id } = ctx.input.params;
    await runInTransaction((trx) => resolveSubmission({ trx, actor }, id, ctx.input.body));
    ctx.body = await loadSubmission(db(), actor.tenantId, id);
  },
});

add<unknown, PeriodQuery>({
  method: 'get',
  path: '/datev',
  auth: 'viewer',
  summary: 'DATEV EXTF Buchungsstapel (CSV, Windows-1252) for a month or quarter, streamed',
  description:
    'One booking per invoice and tax rate (sales by issueDate, incoming by invoiceDate) and one per payment (by date). ' +
    'Chart from settings.datev.chart (default SKR03 for DE, EKR for AT); Berater-/Mandantennummer from settings.datev (defaults 1001 / 1). ' +
    'Expense accounts as in the general ledger (the posted journal line, else connector setting, supplier default, chart default). ' +
    '422 before any byte when a tax rate has no account in the chart, a document is not in EUR, or an expense account is not 4 digits.',
  query: periodQuery(['csv']),
  responses: { 200: { description: 'EXTF_Buchungsstapel_<yyyy-mm>.csv (Windows-1252)', content: { 'text/csv': {} } }, ...errors },
  handler: async (ctx) => {
    const period = periodOf(ctx.input.query);
    const tenant = await loadReportTenant(db(), ctx.state.actor.tenantId);
    const stream = await datevExportStream(tenant, period); // 422 before any byte
    ctx.set('Content-Type', 'text/csv; charset=windows-1252');
    ctx.set('Content-Disposition', `attachment; filename="${datevFileName(period)}"`);
    ctx.set('Cache-Control', 'no-store');
    ctx.compress = DATEV_COMPRESSION;
    ctx.body = stream;
  },
});

/**
 * The DATEV file compressed at the fastest level when the client accepts it: its lines are mostly
 * runs of ";" and shrink about 15-fold at any level (a year at 100,000 invoices: 21.1 MB, gzip
 * level 1 1.37 MB in 34 ms of CPU, the default level 1.27 MB in 103 ms; brotli quality 1 1.35 MB
 * in 25 ms, the default 4 1.19 MB in 144 ms).
 */
const DATEV_COMPRESSION = { gzip: { level: 1 }, deflate: { level: 1 }, br: { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 1 } } };

add<unknown, PeriodQuery>({
  method: 'get',
  path: '/elster',
  auth: 'viewer',
  summary: 'ELSTER UStVA XML (Anmeldungssteuern, ISO-8859-15) for a month or quarter; German tenants',
  query: periodQuery(['xml']),
  responses: { 200: { description: 'UStVA XML for "XML-Daten hochladen" in Mein ELSTER (ISO-8859-15)', content: { 'application/xml': {} } }, ...errors },
  handler: async (ctx) => {
    const period = periodOf(ctx.input.query);
    const tenant = await loadReportTenant(db(), ctx.state.actor.tenantId);
    const xml = await elsterXml(db(), tenant, period);
    ctx.set('Content-Type', 'application/xml; charset=ISO-8859-15');
    ctx.set('Content-Disposition', `attachment; filename="UStVA_${period.label}.xml"`);
    ctx.body = xml;
  },
});

add<unknown, PeriodQuery>({
  method: 'get',
  path: '/zm',
  auth: 'viewer',
  summary: 'Recapitulative statement (ZM) for a month or quarter: json, or xml (FinanzOnline U13 upload file, Austrian tenants)',
  description:
    'Per buyer VAT ID (customer snapshot) the net of the finalized sales lines with taxCategory intraCommunitySupply (supplies) and reverseCharge ' +
    '(services), by issueDate; credit notes count negative, so a cancelled invoice and its credit note net out. Amounts in EUR. ' +
    'xml: the FinanzOnline upload (U13, whole euros) for Austrian tenants; German tenants file with the BZSt, whose file is not produced (400).',
  query: periodQuery(['json', 'xml']),
  responses: {
    200: {
      description: 'By ?format or Accept: the JSON statement, or the FinanzOnline upload file as application/xml (ISO-8859-1)',
      content: { 'application/json': { schema: zmView }, 'application/xml': {} },
    },
    ...errors,
    422: { description: 'xml with nothing to report (NOTHING_TO_REPORT); a document not in EUR (FOREIGN_CURRENCY)' },
  },
  handler: async (ctx) => {
    const period = periodOf(ctx.input.query);
    const format = formatOf(ctx, ['json', 'xml']);
    const tenant = await loadReportTenant(db(), ctx.state.actor.tenantId);
    const report = await zmReport(db(), tenant, period);
    if (format === 'json') {
      ctx.body = report;
      return;
    }
    const xml = zmXmlFor(tenant, report);
    ctx.set('Content-Type', 'application/xml; charset=ISO-8859-1');
    ctx.set('Content-Disposition', `attachment; filename="ZM_${period.label}.xml"`);
    ctx.body = xml;
  },
});

add<unknown, { year: number; format?: Format }>({
  method: 'get',
  path: '/bwa',
  auth: 'viewer',
  summary: 'Management report (BWA) by month and cumulated, with the prior year and the change in percent; json or pdf',
  query: bwaQuery,
  responses: {
    200: {
      description: 'By ?format or Accept: the JSON report, or application/pdf (table and bar chart per month)',
      content: { 'application/json': { schema: bwaView }, 'application/pdf': {} },
    },
    ...errors,
    503: { description: 'The PDF takes longer than RENDER_WAIT_MS; retry after Retry-After seconds' },
  },
  handler: async (ctx) => {
    const { year } = ctx.input.query;
    if (!Number.isInteger(year)) throw invalidInput('year is required', [{ field: 'year', message: 'is required' }]);
    const tenant = await loadReportTenant(db(), ctx.state.actor.tenantId);
    const report = await bwaReport(db(), tenant, year);
    if (formatOf(ctx, ['json', 'pdf']) === 'json') {
      ctx.body = report;
      return;
    }
    const pdf = await obtainReportPdf({ tenantId: tenant.id, report: 'bwa', year, fingerprint: reportFingerprint(tenant, report) }, ctx.config.renderWaitMs);
    ctx.set('Content-Type', 'application/pdf');
    ctx.set('Content-Disposition', `inline; filename="BWA_${year}.pdf"`);
    ctx.body = pdf;
  },
});
