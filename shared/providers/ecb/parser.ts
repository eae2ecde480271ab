import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { ecbRateProblem, type EcbRate } from '../../domain/exchangeRates';
import { EcbFeedError } from './errors';
import { XML_DECLARATION_RE, XML_READER_OPTIONS } from '../../formats/xml';

/**
 * The ECB's euro reference rates XML (eurofxref-daily.xml, eurofxref-hist-90d.xml,
 * eurofxref-hist.xml): `gesmes:Envelope > Cube > Cube[time] > Cube[currency][rate]`, rates as
 * units of the currency per EUR. All or nothing: one bad day or rate refuses the whole feed, so a
 * damaged file never stores part of itself.
 */

const malformed = (why: string) => new EcbFeedError(`ECB rates feed is malformed: ${why}`, { code: 'MALFORMED', transient: false });

// No entity is expanded, not even the predefined ones: the feed's codes, dates and rates have none.
const parser = new XMLParser({
  ...XML_READER_OPTIONS,
  isArray: (name: string, _jpath: unknown, _isLeaf: boolean, isAttribute: boolean) => !isAttribute && name === 'Cube',
});

type Node = Record<string, unknown>;
const cubes = (node: unknown): Node[] => {
  const list = (node as Node | undefined)?.Cube;
  // An empty <Cube></Cube> parses as text: a node without attributes or children.
  return Array.isArray(list) ? list.map((c) => (typeof c === 'object' && c !== null ? (c as Node) : {})) : [];
};

/** The rates of every day in the feed, in the order it lists them; throws EcbFeedError otherwise. */
export function parseEcbRates(xml: string): EcbRate[] {
  if (XML_DECLARATION_RE.test(xml)) {
    throw new EcbFeedError('ECB rates feed refused: it declares a DOCTYPE or entities, which the ECB never sends', { code: 'DOCTYPE', transient: false });
  }
  const wellFormed = XMLValidator.validate(xml);
  if (wellFormed !== true) throw malformed(`not well-formed XML (${wellFormed.err.msg}, line ${wellFormed.err.line})`);
  const doc = parser.parse(xml) as Node;
  const envelope = doc.Envelope;
  if (typeof envelope !== 'object' || envelope === null) throw malformed('no gesmes:Envelope');
  const outer = cubes(envelope);
  if (outer.length !== 1) throw malformed('the envelope must hold exactly one Cube');

  const rates: EcbRate[] = [];
  const seen = new Set<string>();
  for (const day of cubes(outer[0])) {
    const date = day['@_time'];
    if (typeof date !== 'string') throw malformed('a day Cube has no time');
    for (const cube of cubes(day)) {
      const rate: EcbRate = { currency: String(cube['@_currency'] ?? ''), date, rate: String(cube['@_rate'] ?? '') };
      const problem = ecbRateProblem(rate);
      if (problem) throw malformed(problem);
      const key = `${rate.currency} ${rate.date}`;
      if (seen.has(key)) throw malformed(`${rate.currency} is listed twice on ${rate.date}`);
      seen.add(key);
      rates.push(rate);
    }
  }
  if (rates.length === 0) throw malformed('it lists no rates');
  return rates;
}
