/**
 * The tree the rule checkers read (`parseForRules`, ./xmlNodes.ts), taken from a document our
 * writer is about to serialise instead of from its text: the CII writers checked every document
 * by rendering it and parsing the XML again, and that parse was most of the check's CPU (about
 * an eighth of a ZUGFeRD render; docs/benchmarks.md, "Rendering: one-line texts ...").
 *
 * fast-xml-parser with the checkers' options reads `renderXml(root)` as: elements by local name
 * (prefix removed), each an array in document order; attributes as `@_name` (xmlns ones
 * dropped); text trimmed (String.prototype.trim) and then its five predefined entities decoded,
 * which gives back the trimmed value `renderXml` escaped; `'#text': ''` on an element without
 * text or children, no `#text` on one with element children. `renderXml` drops characters XML
 * forbids, as here. Numeric character references stay undecoded in the parser's tree, so a value
 * `renderXml` writes with one (CR in text; TAB, LF, CR in an attribute) is not modelled: then
 * null, and the caller parses the rendered XML as before. test/formats/cii/writtenTree.test.ts
 * compares with the parser on every CII test document and on random values.
 */
import { stripInvalidXmlChars, type XmlElement } from '../../xml';
import type { XNode } from './xmlNodes';

/** Local name as fast-xml-parser's removeNSPrefix resolves it ('' for xmlns declarations). */
function localName(name: string): string {
  const parts = name.split(':');
  if (parts[0] === 'xmlns') return '';
  return parts.length === 2 ? parts[1] : name;
}

class Unmodelled extends Error {}

function nodeOf(element: XmlElement): XNode {
  const node: XNode = {};
  let text: string | null = null;
  for (const child of element.children) {
    if (typeof child === 'string') {
      if (child.includes('\r')) throw new Unmodelled();
      text = (text ?? '') + child;
      continue;
    }
    const name = localName(child.name);
    const list = node[name] as XNode[] | undefined;
    if (list) list.push(nodeOf(child));
    else node[name] = [nodeOf(child)];
  }
  // renderXml refuses mixed content, so text and element children never meet here.
  if (text !== null || element.children.length === 0) node['#text'] = stripInvalidXmlChars(text ?? '').trim();
  for (const [key, value] of element.attrs) {
    const name = localName(key);
    if (!name) continue;
    if (/[\t\n\r]/.test(value)) throw new Unmodelled();
    node[`@_${name}`] = stripInvalidXmlChars(value).trim();
  }
  return node;
}

/** `parseForRules(renderXml(root)).tree`, without rendering and parsing; null when a value is not modelled (see above). */
export function writtenTree(root: XmlElement): XNode | null {
  try {
    return { [localName(root.name)]: [nodeOf(root)] };
  } catch (err) {
    if (err instanceof Unmodelled) return null;
    throw err;
  }
}
