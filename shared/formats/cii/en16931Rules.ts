/**
 * Executable EN 16931 business rules for the CII syntax: the rules that apply to what we produce,
 * re-implemented with the official Schematron's XPath semantics and tolerances (it needs Saxon,
 * which we do not run). Fails closed: what it cannot verify is X-UNSUPPORTED; project rules X-*
 * add checks the Schematron lacks. Rule list: docs/e-invoicing.md, "The EN 16931 checker".
 *
 * The rules themselves are tables in ./rules/ (one small function per rule id, grouped by topic);
 * this module parses the document (or takes the tree of one being written) and runs the tables
 * section by section, per line and per VAT breakdown group, which is the order the findings have
 * always come out in.
 */
import { type Rule, invoiceCtx, type InvoiceCtx } from './rules/context';
import { headerRules, paymentMeansRules, precedingInvoiceRules } from './rules/header';
import { lineRules } from './rules/lines';
import { totalsPresenceRules, totalsRules } from './rules/totals';
import { breakdownPresenceRules, breakdownRules, lineBreakdownRules } from './rules/vatBreakdown';
import { renderXml, type XmlElement } from '../xml';
import { writtenTree } from './rules/writtenTree';
import { kids, parseForRules, type XNode } from './rules/xmlNodes';

export interface En16931Violation {
  rule: string;
  message: string;
}

export type Fail = (rule: string, message: string) => void;

/** Applies every rule of the table to one context, then the next context: rules × contexts in order. */
export function section<C>(rules: ReadonlyArray<Rule<C>>, contexts: (inv: InvoiceCtx) => readonly C[]) {
  return (inv: InvoiceCtx, fail: Fail) => {
    for (const ctx of contexts(inv)) {
      for (const rule of rules) {
        const finding = rule.check(ctx);
        for (const message of typeof finding === 'string' ? [finding] : (finding ?? [])) fail(rule.id, message);
      }
    }
  };
}

/** The order of the sections is the order of the findings; a new rule goes into its topic's table. */
const SECTIONS = [
  section(headerRules, (inv) => [inv]),
  section(lineRules, (inv) => inv.lines.map((line) => ({ inv, line }))),
  section(breakdownPresenceRules, (inv) => [inv]),
  section(breakdownRules, (inv) => inv.groups.map((group) => ({ inv, group }))),
  section(lineBreakdownRules, (inv) => [inv]),
  section(totalsPresenceRules, (inv) => [{ inv, totals: inv.totals }]),
  section(totalsRules, (inv) => (inv.totals.node ? [{ inv, totals: inv.totals }] : [])),
  section(paymentMeansRules, (inv) => inv.paymentMeans),
  section(precedingInvoiceRules, (inv) => inv.precedingInvoices),
];

/**
 * Checks a CII (D16B) invoice against the EN 16931 rules listed in the module comment.
 * Returns one entry per failed rule instance; an empty array means the document passed.
 */
export function checkEn16931(xml: string | Buffer): En16931Violation[] {
  return checkCii(xml, SECTIONS);
}

/**
 * The same check on a document our writer is about to serialise (`renderXml(root)`): the rules
 * read the tree the parser would give for that XML (./rules/writtenTree.ts) instead of the XML
 * being rendered and parsed again; where that tree cannot stand in for the parser's, the XML is.
 */
export function checkEn16931Document(root: XmlElement): En16931Violation[] {
  return checkCiiDocument(root, SECTIONS);
}

type Sections = ReadonlyArray<(inv: InvoiceCtx, fail: Fail) => void>;

/** Parses a CII document and runs the given sections on it (EN 16931 here, the CIUS tables elsewhere). */
export function checkCii(xml: string | Buffer, sections: Sections): En16931Violation[] {
  const source = typeof xml === 'string' ? xml : xml.toString('utf8');
  const read = parseForRules(source);
  if ('notWellFormed' in read) return [violation('XML', read.notWellFormed)];
  return checkTree(read.tree, sections);
}

/** `checkCii(renderXml(root), sections)` on the written tree (see checkEn16931Document). */
export function checkCiiDocument(root: XmlElement, sections: Sections): En16931Violation[] {
  const tree = writtenTree(root);
  return tree ? checkTree(tree, sections) : checkCii(renderXml(root), sections);
}

function checkTree(parsed: XNode, sections: Sections): En16931Violation[] {
  const root = kids(parsed, 'CrossIndustryInvoice')[0];
  if (!root) return [violation('XML', 'Root element is not CrossIndustryInvoice')];
  return runCii(root, sections);
}

function violation(rule: string, message: string): En16931Violation {
  return { rule, message: `[${rule}] ${message}` };
}

/** Runs the sections on a parsed CrossIndustryInvoice root element (also a foreign one: inbound/validate.ts). */
export function runCii(root: XNode, sections: ReadonlyArray<(inv: InvoiceCtx, fail: Fail) => void> = SECTIONS): En16931Violation[] {
  const out: En16931Violation[] = [];
  const inv = invoiceCtx(root);
  for (const run of sections) run(inv, (rule, message) => out.push({ rule, message: `[${rule}] ${message}` }));
  return out;
}
