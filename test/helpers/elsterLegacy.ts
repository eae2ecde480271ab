import iconv from 'iconv-lite';
import { type OfficialFile, officialPath } from './officialFiles';

/**
 * The last public ELSTER UStVA schema (2013), the structure reference: an official file under
 * SCHEMAS_DIR (docs/official-files.md); tests using it declare ELSTER_LEGACY_FILE.
 */
export const ELSTER_LEGACY_FILE: OfficialFile = 'schemas:elster-ustva-legacy-2013/elster0810_UStA_201301_extern.xsd';
export const ELSTER_LEGACY_XSD = officialPath(ELSTER_LEGACY_FILE);

/**
 * Map our current-format document onto the legacy 2013 schema, changing only what that schema
 * pins to 2013 and nothing that carries data: the payload namespace/version attributes become the
 * 2013 ones (art="UStVA" version="201301"), Jahr becomes 2013 (the XSD enumerates only 2013), and
 * Erstellungsdatum moves behind DatenLieferant (2013 order). Then it is wrapped in the 2013
 * transfer envelope of the CONSTRUCTED sample. Kennzahlen, Zeitraum, Steuernummer and the
 * Datenlieferant content stay exactly as written.
 */
export function asLegacy2013(doc: Buffer): Buffer {
  let s = iconv.decode(doc, 'iso-8859-15').replace(/^<\?xml[^>]*\?>\s*/, '');
  s = s.replace(/<Anmeldungssteuern xmlns="[^"]+" version="\d{4}">/, '<Anmeldungssteuern art="UStVA" version="201301">');
  s = s.replace(/<Jahr>\d{4}<\/Jahr>/, '<Jahr>2013</Jahr>');
  // The 2013 schema makes Kz 09 (Hersteller-ID) mandatory; the portal upload ignores it and the
  // service writes none unless one is configured, so the mapping adds a test one.
  if (!s.includes('<Kz09>')) s = s.replace(/(<Steuernummer>\d+<\/Steuernummer>)/, '$1<Kz09>74931</Kz09>');
  const created = /\s*<Erstellungsdatum>\d{8}<\/Erstellungsdatum>/.exec(s)![0];
  s = s.replace(created, '').replace('</DatenLieferant>', `</DatenLieferant>${created}`);
  const envelope =
    '<?xml version="1.0" encoding="ISO-8859-15"?>\n' +
    '<Elster xmlns="http://www.elster.de/2002/XMLSchema">' +
    '<TransferHeader version="8"><Verfahren>ElsterAnmeldung</Verfahren><DatenArt>UStVA</DatenArt><Vorgang>send-NoSig</Vorgang>' +
    '<Testmerker>700000004</Testmerker><HerstellerID>74931</HerstellerID><DatenLieferant>Test</DatenLieferant>' +
    '<Datei><Verschluesselung>PKCS#7v1.5</Verschluesselung><Kompression>GZIP</Kompression><DatenGroesse>1024</DatenGroesse><TransportSchluessel/></Datei>' +
    '</TransferHeader><DatenTeil><Nutzdatenblock><NutzdatenHeader version="10"><NutzdatenTicket>1</NutzdatenTicket>' +
    '<Empfaenger id="F">9203</Empfaenger><Hersteller><ProduktName>Test</ProduktName><ProduktVersion>0.1</ProduktVersion></Hersteller>' +
    '<DatenLieferant>Test</DatenLieferant></NutzdatenHeader><Nutzdaten>' +
    s +
    '</Nutzdaten></Nutzdatenblock></DatenTeil></Elster>\n';
  return iconv.encode(envelope, 'iso-8859-15');
}
