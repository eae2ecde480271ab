/** The UBL 2.1 namespaces and the two profiles (BT-24 CustomizationID, BT-23 ProfileID) we write. */

export const UBL_NAMESPACES = {
  invoice: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
  creditNote: 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2',
  cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
  cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
} as const;

export type UblProfile = 'peppol' | 'xrechnung';

/** Peppol BIS Billing 3.0 process 01 (billing) for both; XRechnung is a CIUS of EN 16931 sent on the same process. */
export const UBL_PROFILES: Record<UblProfile, { name: string; customizationId: string; profileId: string }> = {
  peppol: {
    name: 'Peppol BIS Billing 3.0',
    customizationId: 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0',
    profileId: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
  },
  xrechnung: {
    name: 'XRechnung 3.0',
    customizationId: 'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0',
    profileId: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
  },
};
