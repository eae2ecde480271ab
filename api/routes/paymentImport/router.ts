import { createRouter } from '../../routing';
import { errorEnvelope } from '../../schemas/common';
import { ingestDelivery } from '../../../shared/webhooks/ingest';
import { readRawBody, requireHttps, webhookRateLimit } from './transport';

/**
 * Inbound payment-provider webhooks (docs/webhooks.md). Public: authenticated by the secret URL
 * token and the provider's signature, not by a bearer token.
 */
export const { router: paymentImportRouter, add } = createRouter('/api/payment-import', 'Webhooks');

const err = (description: string) => ({ description, schema: errorEnvelope });

add<unknown, unknown, { provider: string; token: string }>({
  method: 'post',
  path: '/:provider/:token',
  auth: 'public',
  rawBody: true,
  summary: 'Receive a payment-provider webhook',
  description:
    'Body: the provider payload, byte for byte (stripe/paypal/bank JSON, mollie `id=tr_…`). Checks in order: HTTPS (403), ' +
    'rate limit 30/60 min per IP (429), body size (413), URL token (404 whatever the signature), provider signature ' +
    '(400 + log invalid_signature). A verified event is stored with its job and answered 200 `{ received, status }`, ' +
    'status pending (queued) or duplicate (already booked); the job finishes the log row as processed or failed. ' +
    'An authentic payload that cannot be mapped is logged failed and answered 200 with status failed, so the provider stops redelivering it.',
  // No length bounds: an over-long provider or token is as unknown as any other, so 404 (the spec's
  // answer for an unknown token), not a 400 that would tell a prober something about the format.
  // The HTTP server's header limit bounds the path; the token is only ever hashed and looked up.
  params: {
    type: 'object',
    required: ['provider', 'token'],
    properties: { provider: { type: 'string', minLength: 1 }, token: { type: 'string', minLength: 1 } },
  },
  before: [requireHttps, webhookRateLimit, readRawBody],
  // One documented operation per provider, with the headers its signature scheme uses.
  docVariants: [
    {
      params: { provider: 'stripe' },
      summary: 'Stripe webhook (invoice.payment_succeeded, invoice.payment_failed, charge.refunded, invoice_payment.paid)',
      description: 'Verified with `Stripe-Signature: t=<unix>,v1=<hex>`: HMAC-SHA256 of `<t>.<rawBody>` with the endpoint secret (whsec_…), 300 s tolerance.',
      headers: [{ name: 'Stripe-Signature', description: 't=<unix>,v1=<hex HMAC-SHA256>', required: true }],
      requestBody: { contentType: 'application/json', schema: { type: 'object', description: 'Stripe event object' } },
    },
    {
      params: { provider: 'paypal' },
      summary: 'PayPal webhook (PAYMENT.CAPTURE.COMPLETED, PAYMENT.CAPTURE.REFUNDED)',
      description:
        'Verified SHA256withRSA over `transmissionId|transmissionTime|webhookId|crc32(rawBody)` with the certificate at PAYPAL-CERT-URL (allow-listed PayPal hosts only); PAYPAL-TRANSMISSION-TIME must be within 300 s of now.',
      headers: ['PAYPAL-TRANSMISSION-ID', 'PAYPAL-TRANSMISSION-TIME', 'PAYPAL-TRANSMISSION-SIG', 'PAYPAL-CERT-URL', 'PAYPAL-AUTH-ALGO'].map((name) => ({
        name,
        description: `PayPal ${name.toLowerCase().replace('paypal-', '').replace(/-/g, ' ')}`,
        required: true,
      })),
      requestBody: { contentType: 'application/json', schema: { type: 'object', description: 'PayPal webhook event' } },
    },
    {
      params: { provider: 'mollie' },
      summary: 'Mollie webhook (payment.paid, payment.expired, refund.created)',
      description:
        'Mollie posts only the payment id; it is verified by fetching the payment from the Mollie API with the installation’s API key. With a signing secret configured, `X-Mollie-Signature: sha256=<hex>` is checked too.',
      headers: [{ name: 'X-Mollie-Signature', description: 'sha256=<hex HMAC-SHA256 of the body> (when a signing secret is configured)' }],
      requestBody: {
        contentType: 'application/x-www-form-urlencoded',
        schema: { type: 'object', properties: { id: { type: 'string', example: 'tr_WDqYK6vllg' } } },
      },
    },
    {
      params: { provider: 'bank' },
      summary: 'Banking provider webhook (payment_completed, payment_failed)',
      description: 'Verified with `X-Bank-Signature: t=<unix>,v1=<hex>`: HMAC-SHA256 of `<t>.<rawBody>`, 300 s tolerance.',
      headers: [{ name: 'X-Bank-Signature', description: 't=<unix>,v1=<hex HMAC-SHA256>', required: true }],
      requestBody: {
        contentType: 'application/json',
        schema: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            type: { enum: ['payment_completed', 'payment_failed'] },
            createdAt: { type: 'string' },
            data: {
              type: 'object',
              properties: {
                payment_id: { type: 'string' },
                amount: { type: 'string', example: '12.34' },
                currency: { type: 'string' },
                executedAt: { type: 'string', format: 'date' },
                counterparty: {
                  type: 'object',
                  properties: { name: { type: 'string' }, iban: { type: 'string' }, email: { type: 'string' }, merchantId: { type: 'string' } },
                },
                reference: { type: 'string' },
              },
            },
          },
        },
      },
    },
  ],
  responses: {
    200: {
      description: 'Accepted (stored and queued), a duplicate, or authentic but unusable (logged failed)',
      schema: { type: 'object', properties: { received: { type: 'boolean' }, status: { type: 'string', enum: ['pending', 'duplicate', 'failed'] } } },
    },
    400: err('Invalid signature'),
    403: err('Plain HTTP'),
    404: err('Unknown or rotated token, or unknown provider'),
    413: err('Body too large'),
    429: err('Rate limit exceeded (Retry-After)'),
    503: err('Storage unavailable, or the provider could not be reached to verify (Retry-After)'),
  },
  handler: async (ctx) => {
    const result = await ingestDelivery({
      provider: ctx.input.params.provider,
      token: ctx.input.params.token,
      rawBody: ctx.state.rawBody as Buffer,
      headers: ctx.headers,
      config: ctx.config,
    });
    ctx.body = { received: true, status: result.status };
  },
});
