/**
 * The validation report of an inbound e-invoice: which official rules the document breaks, by
 * their ids, each `fatal` or `warning` as the official Schematrons flag it. Pure: it reads what
 * readEInvoice produced (the XML as read, its syntax and declared profile BT-24), no database.
 * The rules are the project's one implementation of each (../cii/rules/ for EN 16931 and
 * XRechnung CII, ../ubl/ublRules.ts for the UBL-only, Peppol and XRechnung UBL rules), run here
 * on a foreign document; a UBL document is projected onto the CII elements the EN 16931 tables
 * read (ublAsCii.ts). What is checked and what is not: docs/e-invoicing-inbound.md,
 * "Validation report".
 */
import Decimal from 'decimal.js';
import { section, runCii } from '../cii/en16931Rules';
import { xrechnungRules } from '../cii/rules/xrechnung';
import { kids, parseForRules, type XNode } from '../cii/rules/xmlNodes';
import { checkUblTree } from '../ubl/ublRules';
import type { UblProfile } from '../ubl/ublProfiles';
import { KNOWN_PROFILE } from './readEInvoice';
import { checkSequences } from './structure';
import type { InboundResult } from './types';
import { ublAsCii } from './ublAsCii';

export type Severity = 'fatal' | 'warning';

export interface ValidationFinding {
  rule: string;
  message: string;
  severity: Severity;
}

type Read = Extract<InboundResult, { ok: true }>;

// BT-24 of XRechnung 3.x (urn:xeinkauf.de) and 2.x (urn:xoev-de), as CIUS or as its extension.
const XRECHNUNG = /#compliant#urn:(xeinkauf\.de:kosit:xrechnung|xoev-de:kosit:standard:xrechnung)_\d/;
const XRECHNUNG_EXTENSION = /#conformant#urn:(xeinkauf\.de|xoev-de):kosit:extension:xrechnung_\d/;
const PEPPOL = /urn:fdc:peppol\.eu:2017:poacc:billing:3\.0/;
// Factur-X / ZUGFeRD profiles below EN 16931: the EN 16931 rules do not apply to them.
const BELOW_EN16931 = /^urn:factur-x\.eu:1p0:(minimum|basicwl)$/;

/**
 * Rules the official Schematrons flag as warnings (everything else they flag fatal): CEN BR-51;
 * KoSIT XRechnung BR-DE-17, -21, -26, -27, -28, BR-TMP-2, BR-DEX-15. Of these the project
 * implements BR-DE-21 only for its own output (an inbound document declared XRechnung to be
 * checked as one).
 */
const WARNINGS = new Set(['BR-51', 'BR-DE-17', 'BR-DE-21', 'BR-DE-26', 'BR-DE-27', 'BR-DE-28', 'BR-TMP-2', 'BR-DEX-15']);

// The checkers' code lists for unit codes (UN/ECE Rec 20/21) and payment means (UNTDID 4461) are
// subsets (what we write and common codes): a code outside them is reported as a warning, since
// the full list, against which the Schematron checks, may well contain it.
const SUBSET_CODE_LISTS = new Set(['BR-CL-16', 'BR-CL-23']);

const stripId = (message: string) => message.replace(/^\[[^\]]+\]\s*/, '');

// The XRechnung CII table (shared with our writer) ends its messages with what to fill in in our
// settings; for a foreign document only the requirement itself is meant.
const withoutSettingsHint = (message: string) => message.replace(/: (set |the tenant's |the customer's ).*$/s, '.');

export interface Declared {
  xrechnung: boolean;
  extension: boolean;
  peppol: boolean;
}

/** Which rule sets BT-24 calls for. */
export function declaredRules(profile: string | null): Declared {
  const p = profile ?? '';
  return { xrechnung: XRECHNUNG.test(p), extension: XRECHNUNG_EXTENSION.test(p), peppol: PEPPOL.test(p) };
}

/**
 * BR-CO-16 under the XRechnung extension: the KoSIT extension scenario counts third-party
 * payments (BT-DEX-002, UBL cac:PrepaidPayment) into the amount due, so the CEN rule, which does
 * not know them, is replaced by that sum (the same one reconcile.ts checks).
 */
function extensionDue(read: Read): ValidationFinding[] {
  const t = read.invoice.totals;
  if (t.due === null || t.gross === null) return [];
  const computed = new Decimal(t.gross)
    .minus(t.prepaid ?? 0)
    .plus(t.rounding ?? 0)
    .plus(t.thirdPartyPayments ?? 0);
  if (computed.toDecimalPlaces(2).equals(new Decimal(t.due))) return [];
  return [
    {
      rule: 'BR-CO-16',
      message: `Amount due for payment (BT-115) ${t.due} ≠ total with VAT ${t.gross} - paid amount + rounding + third-party payments (XRechnung extension) = ${computed.toFixed(2)}.`,
      severity: 'fatal',
    },
  ];
}

/** The validation report of a document readEInvoice read; empty when it breaks none of the rules checked. */
export function validateEInvoice(read: Read): ValidationFinding[] {
  const out: ValidationFinding[] = [];
  const add = (rule: string, message: string) => {
    const subset = SUBSET_CODE_LISTS.has(rule);
    out.push({
      rule,
      message: subset ? `${stripId(message)} (checked against a subset of the code list)` : stripId(message),
      severity: WARNINGS.has(rule) || subset ? 'warning' : 'fatal',
    });
  };

  const rootName = read.syntax === 'CII' ? 'CrossIndustryInvoice' : read.syntax === 'UBL' && read.invoice.kind === 'creditNote' ? 'CreditNote' : 'Invoice';
  for (const problem of checkSequences(read.xml, read.syntax)) add('X-SCHEMA', problem);
  // ebInterface is not a syntax of EN 16931: there is no official rule binding to check it against.
  if (read.syntax === 'ebInterface') return out;

  const { profile } = read;
  if (profile !== null && !KNOWN_PROFILE.test(profile)) {
    add(
      'X-PROFILE',
      `The specification identifier (BT-24) ${profile} is not EN 16931 (urn:cen.eu:en16931:2017, optionally #compliant#/#conformant# a CIUS or extension) nor a Factur-X profile: no validation scenario applies to the document.`,
    );
  }
  if (profile !== null && BELOW_EN16931.test(profile)) return out;

  const parsed = parseForRules(read.xml);
  if ('notWellFormed' in parsed) {
    add('XML', parsed.notWellFormed);
    return out;
  }
  const source = kids(parsed.tree, rootName)[0] as XNode | undefined;
  if (!source) return out;
  const declared = declaredRules(profile);
  const ciiRoot = read.syntax === 'CII' ? source : ublAsCii(source, rootName as 'Invoice' | 'CreditNote');

  for (const v of runCii(ciiRoot)) {
    // Project rules (X-*) check our own output more strictly than the Schematron, or fail closed on
    // what our writer never produces: they are not reasons to call a foreign document invalid.
    if (v.rule.startsWith('X-')) continue;
    if (declared.extension && v.rule === 'BR-CO-16') continue;
    add(v.rule, v.message);
  }
  if (declared.extension) out.push(...extensionDue(read));

  if (read.syntax === 'UBL') {
    const ublProfile: UblProfile | null = declared.peppol ? 'peppol' : declared.xrechnung ? 'xrechnung' : null;
    checkUblTree(source, rootName, ublProfile, add);
  } else if (declared.xrechnung) {
    // BR-DE-21 (the exact XRechnung identifier) is for our output; a declared extension or 2.x is fine here.
    const xr = xrechnungRules.filter((r) => r.id !== 'BR-DE-21');
    for (const v of runCii(ciiRoot, [section(xr, (inv) => [inv])])) add(v.rule, withoutSettingsHint(stripId(v.message)));
  }
  return out;
}

/**
 * What the import writes on the row: the reconciliation's and the fatal findings' rule ids as
 * errors (`valid: false` when there is any), the reader's warnings and the warning findings.
 */
export function validationReport(
  read: Read,
  reconcileProblems: { rule: string; message: string }[],
): { valid: boolean; errors: { rule: string; message: string }[]; warnings: string[] } {
  const findings = validateEInvoice(read);
  const errors = [...reconcileProblems, ...findings.filter((f) => f.severity === 'fatal').map(({ rule, message }) => ({ rule, message }))];
  const warnings = [...read.warnings, ...findings.filter((f) => f.severity === 'warning').map((f) => `${f.rule}: ${f.message}`)];
  return { valid: errors.length === 0, errors, warnings };
}
