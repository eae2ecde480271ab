import { CREDENTIAL_PATTERNS } from '../../../shared/providers/finanzonline/client';
import { EU_COUNTRIES } from '../../../shared/domain/vatId';
import { PLANS } from '../../../shared/plans';
import { TEMPLATE_VARIABLES } from '../../../shared/domain/emailTemplate';
import { name } from '../auth/schemas';
import { peppolIdSchema } from '../customers/schemas';
import { DUNNING_VARIABLES, MAX_DUNNING_LEVELS } from '../../../shared/domain/dunning/levels';

const nullableText = (maxLength: number) => ({ type: ['string', 'null'], maxLength }) as const;

/** Literal text plus {YYYY}, {YY}, {MM} and exactly one counter {NNN…} (3–10 digits). */
const NUMBER_FORMAT = '^(?:[A-Za-z0-9._/-]|\\{YYYY\\}|\\{YY\\}|\\{MM\\})*\\{N{3,10}\\}(?:[A-Za-z0-9._/-]|\\{YYYY\\}|\\{YY\\}|\\{MM\\})*$';
/**
 * The counter restarts every year (invoice_number_sequences is per tenant, type and year), so a
 * pattern without the year would give RE-00001 again in January, and every send would then fail
 * on the unique number. Two patterns, so each failure gets its own message.
 */
const YEAR_TOKEN = '\\{YY(?:YY)?\\}';
const numberFormat = {
  type: 'string',
  maxLength: 40,
  allOf: [
    {
      pattern: NUMBER_FORMAT,
      errorMessage: 'must be literal text (letters, digits, . _ / -) with placeholders {YYYY}, {YY}, {MM} and exactly one counter {NNN…} (3–10 N)',
    },
    {
      pattern: YEAR_TOKEN,
      errorMessage: 'must contain the year as {YYYY} or {YY}: the counter restarts every year, so numbers without the year would repeat',
    },
  ],
  description: 'e.g. RE-{YYYY}-{NNNNN}: placeholders {YYYY}, {YY}, {MM} and one counter {NNN…}; {YYYY} or {YY} is required (the counter restarts every year)',
} as const;

const templates = {
  type: 'object',
  additionalProperties: false,
  description: `E-mail template for sending invoices; variables: ${TEMPLATE_VARIABLES.map((v) => `{{${v}}}`).join(', ')}`,
  properties: { emailSubject: { type: 'string', minLength: 1, maxLength: 500 }, emailBody: { type: 'string', minLength: 1, maxLength: 20000 } },
} as const;

const numberFormats = {
  type: 'object',
  additionalProperties: false,
  properties: { rechnung: numberFormat, angebot: numberFormat, gutschrift: numberFormat },
} as const;

/**
 * DATEV header numbers in the ranges the EXTF writer accepts (shared/formats/datev/
 * extfBuchungsstapel.ts: Beraternummer 1001–9999999, Mandantennummer 1–99999), so a value saved
 * here never makes the export fail at download. No leading zeros: DATEV numbers are integers.
 */
const datev = {
  type: 'object',
  additionalProperties: false,
  properties: {
    consultantNumber: {
      type: 'string',
      pattern: '^(?:100[1-9]|10[1-9]\\d|1[1-9]\\d{2}|[2-9]\\d{3}|[1-9]\\d{4,6})$',
      description: 'Beraternummer, 1001–9999999',
      errorMessage: 'must be a DATEV Beraternummer from 1001 to 9999999 (digits, no leading zero)',
    },
    clientNumber: {
      type: 'string',
      pattern: '^[1-9]\\d{0,4}$',
      description: 'Mandantennummer, 1–99999',
      errorMessage: 'must be a DATEV Mandantennummer from 1 to 99999 (digits, no leading zero)',
    },
    chart: {
      type: 'string',
      enum: ['SKR03', 'SKR04', 'EKR'],
      description: 'Chart of accounts for the DATEV export and the BWA: SKR03/SKR04 (Germany), EKR (Austria); default SKR03 for DE, EKR otherwise',
    },
  },
} as const;

/** Dunning (docs/dunning.md): order of the levels, fee amounts and interest without a law are checked in code (422). */
const dunningLevel = {
  type: 'object',
  additionalProperties: false,
  required: ['daysAfterDue', 'fee', 'chargeInterest', 'emailSubject', 'emailBody'],
  properties: {
    daysAfterDue: {
      type: 'integer',
      minimum: 1,
      maximum: 3650,
      description: 'Days after the due date from which this level is issued; increasing from level to level',
    },
    fee: {
      type: 'string',
      pattern: '^\\d{1,12}(\\.\\d{1,2})?$',
      description: 'Fee of this level in EUR, a decimal string, e.g. "5.00"',
      errorMessage: 'must be a decimal string in EUR with at most 2 places, e.g. "5.00"',
    },
    chargeInterest: {
      type: 'boolean',
      description:
        'Charge statutory default interest (DE § 288 BGB, AT § 456 UGB / § 1000 ABGB) and, from a business, the EUR 40 lump sum once; AT and DE tenants only',
    },
    emailSubject: { type: 'string', minLength: 1, maxLength: 500 },
    emailBody: {
      type: 'string',
      minLength: 1,
      maxLength: 20000,
      description: `Variables: ${DUNNING_VARIABLES.map((v) => `{{${v}}}`).join(', ')}`,
    },
  },
} as const;

const dunning = {
  type: 'object',
  additionalProperties: false,
  required: ['enabled', 'automatic', 'levels'],
  properties: {
    enabled: { type: 'boolean' },
    automatic: { type: 'boolean', description: 'The daily run issues and e-mails due notices; otherwise they wait in GET /api/dunning/proposals for review' },
    levels: { type: 'array', maxItems: MAX_DUNNING_LEVELS, items: dunningLevel, description: `Up to ${MAX_DUNNING_LEVELS} levels` },
  },
} as const;

const einvoiceImport = {
  type: 'object',
  additionalProperties: false,
  description:
    'Posting of imported e-invoices (POST /api/incoming-einvoices) to the ledger, in the import itself (docs/ledger.md): with autoPost, debit the expense account ' +
    "(the supplier's default expense account, else the one its earlier invoices used most, else expenseAccount, else the chart's default) and " +
    'the deductible input tax per rate, credit accounts payable (SKR03 1600, EKR 3300); foreign VAT stays in the expense; a credit note ' +
    'reverses. Another currency posts in EUR at the stored ECB rate, or is left unposted with a warning on the import. Default off',
  properties: {
    autoPost: { type: 'boolean' },
    expenseAccount: {
      type: ['string', 'null'],
      maxLength: 20,
      description: "An expense account of the tenant's chart: the fallback for suppliers without a default or history; null removes it",
    },
  },
} as const;

export const update = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    companyName: name,
    address: nullableText(1000),
    email: { type: ['string', 'null'], format: 'email', maxLength: 254 },
    vatId: { ...nullableText(20), description: 'EU VAT ID, e.g. ATU12345678 or DE123456789 (format checked per country)' },
    taxNumber: { ...nullableText(30), description: 'Steuernummer (needed for U30 / UStVA)' },
    iban: { ...nullableText(42), description: 'IBAN (mod-97 checked)' },
    bic: nullableText(11),
    country: { type: 'string', enum: [...EU_COUNTRIES] },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    plan: { type: 'string', enum: PLANS },
    templates,
    numberFormats,
    zugferdByDefault: { type: 'boolean' },
    smallBusiness: {
      type: 'boolean',
      description:
        'Small-business scheme (AT § 6 Abs. 1 Z 27 UStG 1994, DE § 19 UStG; AT and DE tenants): every sales line is exempt at 0 %. Applies to invoices sent after the change',
    },
    datev,
    contactName: { ...nullableText(200), description: 'Seller contact of e-invoices (BT-41): a person or department; XRechnung requires it (BR-DE-5)' },
    contactPhone: {
      type: ['string', 'null'],
      maxLength: 50,
      pattern: '^(?=(?:\\D*\\d){3})[0-9+()./\\- ]+$',
      description: 'Seller contact telephone (BT-42), at least 3 digits; XRechnung requires it (BR-DE-6)',
    },
    contactEmail: { type: ['string', 'null'], format: 'email', maxLength: 254, description: 'Seller contact e-mail (BT-43); XRechnung requires it (BR-DE-7)' },
    einvoiceImport,
    peppolId: peppolIdSchema,
    dunning,
    portalCredentials: {
      description: 'FinanzOnline web service credentials; write-only (stored encrypted, never returned). null removes them.',
      oneOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['tid', 'benid', 'pin', 'herstellerid'],
          // The intersection of the portal's own schemas for login, upload and logout: a credential
          // that would only fail at the upload is refused here, when it is entered.
          properties: {
            tid: { type: 'string', pattern: CREDENTIAL_PATTERNS.tid, description: 'Teilnehmer-ID, 9–12 letters or digits' },
            benid: { type: 'string', pattern: CREDENTIAL_PATTERNS.benid, description: 'Benutzer-ID of the web service user, 5–12 letters or digits' },
            pin: { type: 'string', pattern: CREDENTIAL_PATTERNS.pin, description: 'PIN, 5–128 characters' },
            herstellerid: {
              type: 'string',
              pattern: CREDENTIAL_PATTERNS.herstellerid,
              description: 'Hersteller-ID (software producer: UID without spaces), 10–24 letters or digits',
            },
          },
        },
        { type: 'null' },
      ],
    },
  },
} as const;

export const settings = {
  type: 'object',
  properties: {
    companyName: { type: 'string' },
    address: { type: ['string', 'null'] },
    email: { type: ['string', 'null'] },
    vatId: { type: ['string', 'null'] },
    taxNumber: { type: ['string', 'null'] },
    iban: { type: ['string', 'null'] },
    bic: { type: ['string', 'null'] },
    country: { type: 'string' },
    currency: { type: 'string' },
    plan: { type: 'string', enum: PLANS },
    templates: { type: 'object', properties: templates.properties },
    // Only what the tenant has set (api/responseSchemas.ts, x-optional).
    numberFormats: { ...numberFormats, 'x-optional': ['rechnung', 'angebot', 'gutschrift'] },
    zugferdByDefault: { type: 'boolean' },
    smallBusiness: { type: 'boolean' },
    datev: { ...datev, 'x-optional': ['consultantNumber', 'clientNumber', 'chart'] },
    contactName: { type: ['string', 'null'] },
    contactPhone: { type: ['string', 'null'] },
    contactEmail: { type: ['string', 'null'] },
    einvoiceImport: {
      type: 'object',
      description: einvoiceImport.description,
      properties: { autoPost: { type: 'boolean' }, expenseAccount: { type: ['string', 'null'] } },
    },
    peppolId: peppolIdSchema,
    dunning,
    portalCredentialsConfigured: { type: 'boolean' },
  },
} as const;
