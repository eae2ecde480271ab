import { randomBytes } from 'node:crypto';

/**
 * Provider webhook events built in code: our own synthetic test data in each provider's
 * documented envelope, with the fields the adapters in shared/providers/payments read. Every
 * event has fresh ids unless given. The providers' published payloads (official files under
 * FIXTURES_DIR, docs/official-files.md) are read only by the adapter tests that parse them.
 *
 * Stripe: https://docs.stripe.com/api/events/object (Invoice, Charge, Refund objects)
 * PayPal: https://developer.paypal.com/api/rest/webhooks/event-names/ (Payments v2 capture/refund)
 * Mollie: https://docs.mollie.com/reference/get-payment, /get-refund (API v2)
 */

const suffix = () => randomBytes(6).toString('hex');

/** 2009-02-13T23:31:30Z: the time every Stripe test event is created and paid at. */
export const STRIPE_TEST_CREATED = 1234567890;
/** One paying customer for all Stripe test events unless given (the supplier they resolve to). */
export const STRIPE_TEST_CUSTOMER = 'cus_test_payer';
/** The charge of the Stripe refund events unless given. */
export const STRIPE_TEST_CHARGE = 'ch_test_charge';

function stripeEvent(type: string, object: Record<string, any>, eventId?: string) {
  return {
    id: eventId ?? `evt_test_${suffix()}`,
    object: 'event',
    api_version: '2026-07-29.dahlia',
    created: STRIPE_TEST_CREATED,
    data: { object } as { object: Record<string, any>; previous_attributes?: Record<string, unknown> },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}

/** A Stripe Invoice as invoice.payment_succeeded / invoice.payment_failed carry it (current API: no charge or payment_intent on it). */
function stripeInvoice(paid: boolean, over: { invoiceId?: string; amount?: number; currency?: string; customer?: string; email?: string | null }) {
  const id = over.invoiceId ?? `in_test_${suffix()}`;
  const amount = over.amount ?? 1000;
  return {
    id,
    object: 'invoice',
    amount_due: amount,
    amount_paid: paid ? amount : 0,
    amount_remaining: paid ? 0 : amount,
    attempt_count: 1,
    attempted: true,
    billing_reason: 'manual',
    collection_method: 'charge_automatically',
    created: STRIPE_TEST_CREATED,
    currency: over.currency ?? 'eur',
    customer: over.customer ?? STRIPE_TEST_CUSTOMER,
    customer_address: { city: null, country: null, line1: null, line2: null, postal_code: null, state: null },
    customer_email: over.email ?? null,
    customer_name: null,
    customer_tax_ids: [],
    description: null,
    lines: {
      object: 'list',
      data: [
        {
          id: `il_test_${suffix()}`,
          object: 'line_item',
          amount,
          currency: over.currency ?? 'eur',
          description: 'Test subscription',
          invoice: id,
          quantity: 1,
        },
      ],
      has_more: false,
      url: `/v1/invoices/${id}/lines`,
    },
    livemode: false,
    metadata: {},
    next_payment_attempt: paid ? null : STRIPE_TEST_CREATED,
    number: null,
    status: paid ? 'paid' : 'open',
    status_transitions: { finalized_at: STRIPE_TEST_CREATED, marked_uncollectible_at: null, paid_at: paid ? STRIPE_TEST_CREATED : null, voided_at: null },
    subtotal: amount,
    total: amount,
  };
}

/** invoice.payment_succeeded, EUR by default (so it can be auto-posted), 10.00 unless `amount` (minor units). */
export function stripePaymentEvent(
  over: { invoiceId?: string; eventId?: string; amount?: number; currency?: string; customer?: string; email?: string | null } = {},
) {
  return stripeEvent('invoice.payment_succeeded', stripeInvoice(true, over), over.eventId);
}

/** invoice.payment_failed: nothing paid, 10.00 USD was due. */
export function stripeFailedEvent(over: { eventId?: string; invoiceId?: string } = {}) {
  return stripeEvent('invoice.payment_failed', stripeInvoice(false, { invoiceId: over.invoiceId, currency: 'usd' }), over.eventId);
}

function stripeRefund(over: { id?: string; amount: number; currency: string; charge: string; paymentIntent?: string | null }) {
  return {
    id: over.id ?? `re_test_${suffix()}`,
    object: 'refund',
    amount: over.amount,
    charge: over.charge,
    created: STRIPE_TEST_CREATED,
    currency: over.currency,
    metadata: {},
    payment_intent: over.paymentIntent ?? null,
    reason: null,
    status: 'succeeded',
  };
}

function stripeCharge(over: { id: string; currency: string; amount: number; refunded: number; paymentIntent?: string | null; invoice?: string }) {
  return {
    id: over.id,
    object: 'charge',
    amount: over.amount,
    amount_captured: over.amount,
    amount_refunded: over.refunded,
    billing_details: {
      address: { city: null, country: null, line1: null, line2: null, postal_code: null, state: null },
      email: null,
      name: 'Test Cardholder',
      phone: null,
    },
    captured: true,
    created: STRIPE_TEST_CREATED,
    currency: over.currency,
    customer: null,
    description: 'Test charge',
    ...(over.invoice ? { invoice: over.invoice } : {}),
    livemode: false,
    paid: true,
    payment_intent: over.paymentIntent ?? null,
    receipt_email: null,
    refunded: over.refunded >= over.amount,
    status: 'succeeded',
  };
}

/** charge.refunded as older API versions send it: the charge names the invoice it paid, with its refund list. Refunds 1.00 unless `amount`. */
export function stripeRefundEvent(over: { invoiceId: string; refundId?: string; amount?: number; currency?: string }) {
  const currency = over.currency ?? 'eur';
  const amount = over.amount ?? 100;
  const charge = stripeCharge({ id: STRIPE_TEST_CHARGE, currency, amount: 100, refunded: 100, invoice: over.invoiceId });
  const refund = stripeRefund({ id: over.refundId, amount, currency, charge: charge.id });
  return stripeEvent('charge.refunded', { ...charge, refunds: { object: 'list', data: [refund], has_more: false, url: `/v1/charges/${charge.id}/refunds` } });
}

/**
 * charge.refunded in the current API shape (since 2025-03-31.basil): no `invoice` on the charge,
 * which belongs to a PaymentIntent; a charge of 100.00 EUR. withoutRefundList: as Stripe sends it
 * since 2022-11-15 (no charge.refunds; previous_attributes).
 */
export function stripeCurrentRefundEvent(over: {
  paymentIntent: string;
  chargeId?: string;
  refundId?: string;
  amount: number;
  refundedBefore?: number;
  withoutRefundList?: boolean;
}) {
  const before = over.refundedBefore ?? 0;
  const charge = stripeCharge({
    id: over.chargeId ?? `ch_test_${suffix()}`,
    currency: 'eur',
    amount: 10_000,
    refunded: before + over.amount,
    paymentIntent: over.paymentIntent,
  });
  if (over.withoutRefundList) {
    const e = stripeEvent('charge.refunded', charge);
    e.data.previous_attributes = { amount_refunded: before };
    return e;
  }
  const refund = stripeRefund({ id: over.refundId, amount: over.amount, currency: 'eur', charge: charge.id, paymentIntent: over.paymentIntent });
  return stripeEvent('charge.refunded', { ...charge, refunds: { object: 'list', data: [refund], has_more: false, url: `/v1/charges/${charge.id}/refunds` } });
}

const paypalLinks = (kind: 'captures' | 'refunds', id: string) => [{ href: `https://api.paypal.com/v2/payments/${kind}/${id}`, rel: 'self', method: 'GET' }];

function paypalEvent(eventType: string, resourceType: string, summary: string, resource: Record<string, any>) {
  const id = `WH-TEST-${suffix().toUpperCase()}`;
  return {
    id,
    create_time: resource.create_time as string,
    resource_type: resourceType,
    event_type: eventType,
    summary,
    resource,
    links: [{ href: `https://api.paypal.com/v1/notifications/webhooks-events/${id}`, rel: 'self', method: 'GET' }],
    event_version: '1.0',
    resource_version: '2.0',
  };
}

/** PAYMENT.CAPTURE.COMPLETED for 2.51 USD, with a fresh event and capture id. */
export function paypalCaptureEvent() {
  const captureId = `CAP${suffix().toUpperCase()}`;
  return paypalEvent('PAYMENT.CAPTURE.COMPLETED', 'capture', 'Payment completed for $ 2.51 USD', {
    id: captureId,
    amount: { currency_code: 'USD', value: '2.51' },
    final_capture: true,
    status: 'COMPLETED',
    create_time: '2019-02-14T21:49:58Z',
    update_time: '2019-02-14T21:49:58Z',
    links: [...paypalLinks('captures', captureId), { href: `https://api.paypal.com/v2/payments/captures/${captureId}/refund`, rel: 'refund', method: 'POST' }],
  });
}

/** PAYMENT.CAPTURE.REFUNDED of 0.99 USD; the refunded capture is named by links[rel=up]. */
export function paypalRefundEvent(captureId: string) {
  const refundId = `REF${suffix().toUpperCase()}`;
  return paypalEvent('PAYMENT.CAPTURE.REFUNDED', 'refund', 'A $ 0.99 USD capture payment was refunded', {
    id: refundId,
    amount: { currency_code: 'USD', value: '0.99' },
    status: 'COMPLETED',
    create_time: '2019-02-15T09:00:00Z',
    update_time: '2019-02-15T09:00:00Z',
    links: [...paypalLinks('refunds', refundId), { href: `https://api.paypal.com/v2/payments/captures/${captureId}`, rel: 'up', method: 'GET' }],
  });
}

/** A paid Mollie payment of 20.00 EUR as GET /v2/payments/:id answers; `over` replaces fields (e.g. id, status, amount). */
export function molliePaymentBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  const id = (over.id as string | undefined) ?? `tr_test${suffix()}`;
  return {
    resource: 'payment',
    id,
    mode: 'test',
    createdAt: '2025-06-02T09:00:00+00:00',
    amount: { value: '20.00', currency: 'EUR' },
    description: 'Test order 1001',
    method: 'ideal',
    metadata: { order_id: '1001' },
    status: 'paid',
    paidAt: '2025-06-02T09:05:00+00:00',
    amountRefunded: { value: '0.00', currency: 'EUR' },
    amountRemaining: { value: '20.00', currency: 'EUR' },
    details: { consumerName: 'Test Kunde', consumerAccount: 'NL17RABO0213698412', consumerBic: 'TESTNL99' },
    countryCode: 'NL',
    profileId: 'pfl_test',
    sequenceType: 'oneoff',
    _links: { self: { href: `https://api.mollie.com/v2/payments/${id}`, type: 'application/hal+json' } },
    ...over,
  };
}

/** A pending Mollie refund of the whole 20.00 EUR of `paymentId`; `over` replaces fields. */
export function mollieRefundBody(paymentId: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  const id = (over.id as string | undefined) ?? `re_test${suffix()}`;
  return {
    resource: 'refund',
    id,
    amount: { value: '20.00', currency: 'EUR' },
    status: 'pending',
    createdAt: '2025-06-03T10:00:00+00:00',
    description: 'Test order 1001',
    paymentId,
    settlementAmount: { value: '-20.00', currency: 'EUR' },
    _links: {
      self: { href: `https://api.mollie.com/v2/payments/${paymentId}/refunds/${id}`, type: 'application/hal+json' },
      payment: { href: `https://api.mollie.com/v2/payments/${paymentId}`, type: 'application/hal+json' },
    },
    ...over,
  };
}
