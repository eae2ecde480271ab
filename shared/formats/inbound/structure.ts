/**
 * A light stand-in for the XSD at the root of the document: the root element's children must be
 * ones its schema type declares, in the schema's order, and the required ones present. There is
 * no XSD validator at runtime (xmllint is a test tool; no maintained pure-JS XSD 1.0 validator
 * is in node_modules, and a WASM libxml2 would be a heavy dependency for this). The sequences are
 * copied from the official schemas (UBL 2.1 maindoc, CII D16B, ebInterface 6.0/6.1 Invoice.xsd);
 * '!' marks minOccurs ≥ 1. Deeper levels are left to the business rules (validate.ts) and to the
 * reader, which refuses what it cannot read. See docs/e-invoicing-inbound.md, "Validation report".
 */

const seq = (s: string) => s.split(' ').map((n) => ({ name: n.replace('!', ''), required: n.endsWith('!') }));

const UBL_INVOICE = seq(
  'UBLExtensions UBLVersionID CustomizationID ProfileID ProfileExecutionID ID! CopyIndicator UUID IssueDate! IssueTime DueDate ' +
    'InvoiceTypeCode Note TaxPointDate DocumentCurrencyCode TaxCurrencyCode PricingCurrencyCode PaymentCurrencyCode ' +
    'PaymentAlternativeCurrencyCode AccountingCostCode AccountingCost LineCountNumeric BuyerReference InvoicePeriod OrderReference ' +
    'BillingReference DespatchDocumentReference ReceiptDocumentReference StatementDocumentReference OriginatorDocumentReference ' +
    'ContractDocumentReference AdditionalDocumentReference ProjectReference Signature AccountingSupplierParty! AccountingCustomerParty! ' +
    'PayeeParty BuyerCustomerParty SellerSupplierParty TaxRepresentativeParty Delivery DeliveryTerms PaymentMeans PaymentTerms ' +
    'PrepaidPayment AllowanceCharge TaxExchangeRate PricingExchangeRate PaymentExchangeRate PaymentAlternativeExchangeRate TaxTotal ' +
    'WithholdingTaxTotal LegalMonetaryTotal! InvoiceLine!',
);

const UBL_CREDIT_NOTE = seq(
  'UBLExtensions UBLVersionID CustomizationID ProfileID ProfileExecutionID ID! CopyIndicator UUID IssueDate! IssueTime TaxPointDate ' +
    'CreditNoteTypeCode Note DocumentCurrencyCode TaxCurrencyCode PricingCurrencyCode PaymentCurrencyCode PaymentAlternativeCurrencyCode ' +
    'AccountingCostCode AccountingCost LineCountNumeric BuyerReference InvoicePeriod DiscrepancyResponse OrderReference BillingReference ' +
    'DespatchDocumentReference ReceiptDocumentReference ContractDocumentReference AdditionalDocumentReference StatementDocumentReference ' +
    'OriginatorDocumentReference Signature AccountingSupplierParty! AccountingCustomerParty! PayeeParty BuyerCustomerParty ' +
    'SellerSupplierParty TaxRepresentativeParty Delivery DeliveryTerms PaymentMeans PaymentTerms TaxExchangeRate PricingExchangeRate ' +
    'PaymentExchangeRate PaymentAlternativeExchangeRate AllowanceCharge TaxTotal LegalMonetaryTotal! CreditNoteLine!',
);

const CII = seq('ExchangedDocumentContext! ExchangedDocument! SupplyChainTradeTransaction!');
const CII_CONTEXT = seq(
  'SpecifiedTransactionID TestIndicator BusinessProcessSpecifiedDocumentContextParameter BIMSpecifiedDocumentContextParameter ' +
    'ScenarioSpecifiedDocumentContextParameter ApplicationSpecifiedDocumentContextParameter GuidelineSpecifiedDocumentContextParameter ' +
    'SubsetSpecifiedDocumentContextParameter MessageStandardSpecifiedDocumentContextParameter',
);
const CII_DOCUMENT = seq(
  'ID! Name TypeCode IssueDateTime! CopyIndicator Purpose ControlRequirementIndicator LanguageID PurposeCode RevisionDateTime VersionID ' +
    'GlobalID RevisionID PreviousRevisionID CategoryCode IncludedNote EffectiveSpecifiedPeriod IssuerTradeParty',
);
const CII_TRANSACTION = seq('IncludedSupplyChainTradeLineItem ApplicableHeaderTradeAgreement! ApplicableHeaderTradeDelivery! ApplicableHeaderTradeSettlement!');

// ebInterface 6.0 and 6.1 declare the same sequences for InvoiceType and CancelledOriginalDocumentType.
const EBINTERFACE = seq(
  'InvoiceNumber! InvoiceDate! CancelledOriginalDocument RelatedDocument AdditionalInformation CurrencyExchangeInformation Delivery ' +
    'Biller! InvoiceRecipient! OrderingParty Details! ReductionAndSurchargeDetails Tax! TotalGrossAmount! PrepaidAmount RoundingAmount ' +
    'PayableAmount! PaymentMethod PaymentConditions Comment Extension',
);
const EBINTERFACE_CANCELLED = seq('InvoiceNumber! InvoiceDate! DocumentType Comment');

type Sequence = ReturnType<typeof seq>;

/** Per syntax: element path (local names from the root) → the sequence of its children. */
const SEQUENCES: Record<'UBL' | 'CII' | 'ebInterface', Record<string, Sequence>> = {
  UBL: { Invoice: UBL_INVOICE, CreditNote: UBL_CREDIT_NOTE },
  CII: {
    CrossIndustryInvoice: CII,
    'CrossIndustryInvoice/ExchangedDocumentContext': CII_CONTEXT,
    'CrossIndustryInvoice/ExchangedDocument': CII_DOCUMENT,
    'CrossIndustryInvoice/SupplyChainTradeTransaction': CII_TRANSACTION,
  },
  ebInterface: { Invoice: EBINTERFACE, 'Invoice/CancelledOriginalDocument': EBINTERFACE_CANCELLED },
};

// Tags in document order (comments, CDATA and processing instructions skipped). The reader has
// already found the XML well-formed, so a regular scan is enough.
const TOKEN =
  /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<\?[\s\S]*?\?>|<(\/?)(?:[A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)(?:\s+[^\s=>/]+\s*=\s*(?:"[^"]*"|'[^']*'))*\s*(\/?)>/g;

/** For each occurrence of an element whose path is in `paths`: its path and its children's local names, in document order. */
export function childrenAt(xml: string, paths: ReadonlySet<string>): { path: string; children: string[] }[] {
  const out: { path: string; children: string[] }[] = [];
  const stack: { path: string; children: string[] | null }[] = [];
  for (const m of xml.matchAll(TOKEN)) {
    if (m[2] === undefined) continue;
    if (m[1]) {
      stack.pop();
      continue;
    }
    const parent = stack[stack.length - 1];
    parent?.children?.push(m[2]);
    const path = parent ? `${parent.path}/${m[2]}` : m[2];
    const entry = { path, children: paths.has(path) ? [] : null };
    if (entry.children) out.push({ path, children: entry.children });
    if (!m[3]) stack.push(entry);
  }
  return out;
}

/** What the schema's sequences say about the document: unknown, misplaced and missing children. */
export function checkSequences(xml: string, syntax: 'UBL' | 'CII' | 'ebInterface'): string[] {
  const sequences = SEQUENCES[syntax];
  const problems: string[] = [];
  for (const { path, children } of childrenAt(xml, new Set(Object.keys(sequences)))) {
    const sequence = sequences[path];
    const index = new Map(sequence.map((e, i) => [e.name, i]));
    let last = -1;
    let lastName = '';
    for (const name of children) {
      const i = index.get(name);
      if (i === undefined) problems.push(`${path}: element ${name} is not allowed here by the ${syntax} schema`);
      else if (i < last) problems.push(`${path}: element ${name} must come before ${lastName} (schema order)`);
      else {
        last = i;
        lastName = name;
      }
    }
    const present = new Set(children);
    for (const e of sequence) if (e.required && !present.has(e.name)) problems.push(`${path}: required element ${e.name} is missing`);
  }
  return problems;
}
