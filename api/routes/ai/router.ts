import { createRouter } from '../../routing';
import { planGate } from '../../../shared/plans';
import { generateOfferDetails, type OfferDetailsInput } from '../../../shared/providers/ai/offerDetails';

export const { router: aiRouter, add } = createRouter('/api/ai', 'AI');

const offerDetailsBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    customerName: { type: 'string', maxLength: 200 },
    items: {
      type: 'array',
      maxItems: 200,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['description'],
        properties: {
          description: { type: 'string', minLength: 1, maxLength: 2000 },
          quantity: { type: 'number', minimum: 0, maximum: 1e9 },
          unit: { type: 'string', maxLength: 50 },
        },
      },
    },
    headerText: { type: 'string', maxLength: 5000 },
    instruction: { type: 'string', maxLength: 2000 },
  },
} as const;

add<OfferDetailsInput>({
  method: 'post',
  path: '/offer-details',
  auth: 'member',
  summary: 'Draft Markdown detail pages for a quote with an AI model (Pro or Business plan); nothing is stored',
  body: offerDetailsBody,
  before: [planGate('aiOfferDetails')],
  responses: {
    200: { description: 'Markdown for review', schema: { type: 'object', properties: { ok: { type: 'boolean' }, markdown: { type: 'string' } } } },
    403: { description: 'PLAN_LIMIT: the tenant plan does not include AI offer details' },
    502: { description: 'PROVIDER_ERROR: the AI provider failed or timed out' },
    503: { description: 'No AI provider is configured' },
  },
  handler: async (ctx) => {
    ctx.body = await generateOfferDetails(ctx.input.body, ctx.config.ai);
  },
});
