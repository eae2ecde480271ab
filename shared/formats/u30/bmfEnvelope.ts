import { type TaxPeriod, periodYearMonths, viennaDateTime } from '../../domain/tax/period';
import { escapeAttr, stripInvalidXmlChars } from '../xml';
import { encodeXmlDocument } from './xmlText';

/**
 * The BMF upload file around one declaration (ERKLAERUNGS_UEBERMITTLUNG > INFO_DATEN + one
 * ERKLAERUNG), shared by the U30 (VAT return) and the U13 (ZM): ISO-8859-1, no namespace, creation
 * time in Vienna wall-clock time, tab-indented body lines.
 */
export interface BmfEnvelope {
  art: 'U30' | 'U13';
  period: TaxPeriod;
  /** FASTNR of the taxpayer (9 digits, normalized). */
  fastnr: string;
  /** FASTNR of the party transmitting (INFO_DATEN). */
  submitter: string;
  packageNumber: number;
  createdAt: Date;
  customerInfo?: string;
  /** The declaration's content after ALLGEMEINE_DATEN, each line indented by two tabs. */
  body: string;
}

export function buildBmfEnvelope(e: BmfEnvelope): Buffer {
  const { date, time } = viennaDateTime(e.createdAt);
  const { from, to } = periodYearMonths(e.period);
  const info = e.customerInfo !== undefined ? stripInvalidXmlChars(e.customerInfo).slice(0, 50) : undefined;
  const xml =
    '<?xml version="1.0" encoding="iso-8859-1"?>\n' +
    '<ERKLAERUNGS_UEBERMITTLUNG>\n' +
    '\t<INFO_DATEN>\n' +
    '\t\t<ART_IDENTIFIKATIONSBEGRIFF>FASTNR</ART_IDENTIFIKATIONSBEGRIFF>\n' +
    `\t\t<IDENTIFIKATIONSBEGRIFF>${e.submitter}</IDENTIFIKATIONSBEGRIFF>\n` +
    `\t\t<PAKET_NR>${e.packageNumber}</PAKET_NR>\n` +
    `\t\t<DATUM_ERSTELLUNG type="datum">${date}</DATUM_ERSTELLUNG>\n` +
    `\t\t<UHRZEIT_ERSTELLUNG type="uhrzeit">${time}</UHRZEIT_ERSTELLUNG>\n` +
    '\t\t<ANZAHL_ERKLAERUNGEN>1</ANZAHL_ERKLAERUNGEN>\n' +
    '\t</INFO_DATEN>\n' +
    `\t<ERKLAERUNG art="${e.art}">\n` +
    '\t\t<SATZNR>1</SATZNR>\n' +
    '\t\t<ALLGEMEINE_DATEN>\n' +
    `\t\t\t<ANBRINGEN>${e.art}</ANBRINGEN>\n` +
    `\t\t\t<ZRVON type="jahrmonat">${from}</ZRVON>\n` +
    `\t\t\t<ZRBIS type="jahrmonat">${to}</ZRBIS>\n` +
    `\t\t\t<FASTNR>${e.fastnr}</FASTNR>\n` +
    (info !== undefined ? `\t\t\t<KUNDENINFO>${escapeAttr(info)}</KUNDENINFO>\n` : '') +
    '\t\t</ALLGEMEINE_DATEN>\n' +
    e.body +
    '\t</ERKLAERUNG>\n' +
    '</ERKLAERUNGS_UEBERMITTLUNG>\n';
  return encodeXmlDocument(xml, 'ISO-8859-1');
}
