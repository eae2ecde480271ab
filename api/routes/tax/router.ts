import { createRouter } from '../../routing';
import { errorEnvelope } from '../../schemas/common';
import { EXEMPTION_REASONS, type TaxCountry } from '../../../shared/domain/tax/vatCategory';

/** Reference data for the VAT categories of invoice lines (docs/vat-categories.md). Any role reads it. */
export const { router: taxRouter, add } = createRouter('/api/tax', 'Tax');

const exemptionReasonView = {
  type: 'object',
  properties: {
    code: { type: 'string', description: 'What a line sends as exemptionReason, e.g. AT-6-1-19' },
    text: { type: 'string' },
    legalBasis: { type: 'string', description: 'As printed on documents, e.g. "§ 6 Abs. 1 Z 27 UStG 1994"' },
    vatex: { type: ['string', 'null'], description: 'CEF VATEX code (EN 16931 BT-121) where the EU list has one' },
  },
} as const;

add<unknown, { country: TaxCountry }>({
  method: 'get',
  path: '/exemption-reasons',
  auth: 'viewer',
  summary: 'Exemption reasons a line with taxCategory exempt may name, per seller country',
  query: {
    type: 'object',
    additionalProperties: false,
    required: ['country'],
    properties: { country: { type: 'string', enum: ['AT', 'DE'], description: "The seller's (tenant's) country" } },
  },
  responses: {
    200: { description: 'Exemption reasons', schema: { type: 'array', items: exemptionReasonView } },
    400: { description: 'Unknown country', schema: errorEnvelope },
    401: { description: 'Not signed in', schema: errorEnvelope },
  },
  handler: async (ctx) => {
    ctx.body = EXEMPTION_REASONS[ctx.input.query.country].map(({ code, text, legalBasis, vatex }) => ({ code, text, legalBasis, vatex }));
  },
});
