/**
 * XMP for Factur-X 1.0 / ZUGFeRD 2.x. The fx properties are not part of any schema PDF/A knows,
 * so PDF/A requires them to be declared in a pdfaExtension schema description in the same
 * packet; validators (veraPDF, Mustang, FNFE) look for both.
 */
import { escapeAttr } from '../xml';

export const FACTURX_NAMESPACE = 'urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#';
export const FACTURX_FILENAME = 'factur-x.xml';

export type FacturXProfile = 'MINIMUM' | 'BASIC WL' | 'BASIC' | 'EN 16931' | 'EXTENDED';

const PROPERTIES: Array<[name: string, description: string]> = [
  ['DocumentFileName', 'The name of the embedded XML document'],
  ['DocumentType', 'The type of the hybrid document in capital letters, e.g. INVOICE or ORDER'],
  ['Version', 'The actual version of the standard applying to the embedded XML document'],
  ['ConformanceLevel', 'The conformance level of the embedded XML document'],
];

/** The two rdf:Description elements to add to the document's XMP packet. */
export function facturXDescriptions(profile: FacturXProfile): string[] {
  const props = PROPERTIES.map(
    ([name, description]) => `            <rdf:li rdf:parseType="Resource">
              <pdfaProperty:name>${name}</pdfaProperty:name>
              <pdfaProperty:valueType>Text</pdfaProperty:valueType>
              <pdfaProperty:category>external</pdfaProperty:category>
              <pdfaProperty:description>${escapeAttr(description)}</pdfaProperty:description>
            </rdf:li>`,
  ).join('\n');

  const extension = `  <rdf:Description rdf:about=""
      xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/"
      xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#"
      xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">
    <pdfaExtension:schemas>
      <rdf:Bag>
        <rdf:li rdf:parseType="Resource">
          <pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema>
          <pdfaSchema:namespaceURI>${FACTURX_NAMESPACE}</pdfaSchema:namespaceURI>
          <pdfaSchema:prefix>fx</pdfaSchema:prefix>
          <pdfaSchema:property>
            <rdf:Seq>
${props}
            </rdf:Seq>
          </pdfaSchema:property>
        </rdf:li>
      </rdf:Bag>
    </pdfaExtension:schemas>
  </rdf:Description>
`;

  const values = `  <rdf:Description rdf:about="" xmlns:fx="${FACTURX_NAMESPACE}">
    <fx:DocumentType>INVOICE</fx:DocumentType>
    <fx:DocumentFileName>${FACTURX_FILENAME}</fx:DocumentFileName>
    <fx:Version>1.0</fx:Version>
    <fx:ConformanceLevel>${escapeAttr(profile)}</fx:ConformanceLevel>
  </rdf:Description>
`;
  return [extension, values];
}
