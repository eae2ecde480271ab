/**
 * The German seller and public-sector buyer the e-invoice tests send between (XRechnung needs a
 * Leitweg-ID as BT-10 and the buyer's Peppol address); tests add what their case needs.
 */
export const SPREE_SELLER = {
  country: 'DE',
  name: 'Spree Software GmbH',
  vatId: 'DE123456789',
  taxNumber: '9198011310010',
  address: 'Musterstraße 1\n10115 Berlin',
  iban: 'DE89370400440532013000',
  bic: 'COBADEFFXXX',
};

export const POTSDAM_BUYER = {
  company: 'Stadtverwaltung Potsdam',
  address: 'Friedrich-Ebert-Straße 79\n14469 Potsdam',
  country: 'DE',
  email: 'eingang@potsdam.example',
  buyerReference: '04011000-12345-03',
  peppolId: { scheme: '0204', id: '04011000-12345-03' },
};
