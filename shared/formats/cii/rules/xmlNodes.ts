/**
 * Navigation in the parsed CII tree (fast-xml-parser, namespace prefixes removed, every element an
 * array): the small XPath subset the rules need.
 */

import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { XML_READER_OPTIONS } from '../../xml';

export type XNode = { [key: string]: unknown };

const parser = new XMLParser({
  ...XML_READER_OPTIONS,
  // The checkers compare text as written, so the predefined entities are decoded; a document with
  // declarations never gets here (our writers emit none, the inbound reader refuses them first).
  processEntities: true,
  trimValues: true,
  alwaysCreateTextNode: true,
  isArray: (_name: string, _jpath: unknown, _isLeaf: boolean, isAttribute: boolean) => !isAttribute,
});

/** A document as the rule checkers (EN 16931 on CII, Peppol/XRechnung on UBL) read it, or why it is not well-formed. */
export function parseForRules(source: string): { tree: XNode } | { notWellFormed: string } {
  const wellFormed = XMLValidator.validate(source);
  if (wellFormed !== true) return { notWellFormed: `Not well-formed XML: ${wellFormed.err.msg} (line ${wellFormed.err.line})` };
  return { tree: parser.parse(source) as XNode };
}

export function kids(node: XNode | undefined, name: string): XNode[] {
  if (!node) return [];
  const v = node[name];
  if (!Array.isArray(v)) return [];
  return v.map((x) => (typeof x === 'object' && x !== null ? (x as XNode) : { '#text': String(x) }));
}

export function all(node: XNode | undefined, path: string): XNode[] {
  let current: XNode[] = node ? [node] : [];
  for (const step of path.split('/')) current = current.flatMap((n) => kids(n, step));
  return current;
}

export function one(node: XNode | undefined, path: string): XNode | undefined {
  return all(node, path)[0];
}

export function text(node: XNode | undefined): string | undefined {
  if (!node) return undefined;
  const t = node['#text'];
  return t === undefined || t === null ? undefined : String(t);
}

export function textAt(node: XNode | undefined, path: string): string | undefined {
  return text(one(node, path));
}

export function attr(node: XNode | undefined, name: string): string | undefined {
  if (!node) return undefined;
  const v = node[`@_${name}`];
  return v === undefined ? undefined : String(v);
}

export function blank(s: string | undefined): boolean {
  return s === undefined || s.replace(/\s+/g, '') === '';
}
