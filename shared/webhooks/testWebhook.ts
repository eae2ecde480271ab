import { db } from '../db';
import { decryptJson, decryptSecret } from '../crypto/secretBox';
import { notFound } from '../errors';
import {
  getAdapter,
  PayloadError,
  ProviderUnavailableError,
  SignatureError,
  type NormalizedEvent,
  type PaymentProviderConfig,
  type ProviderSecrets,
  type SyntheticEvent,
} from '../providers/payments';
import { slugOrNotFound } from '../queries/connectors';
import type { Actor } from '../actor';
import { findInstallationByToken } from '../queries/connectorInstallations';
import type { ConnectorSettings } from '../domain/connectorSettings';
import { bookPaymentEvent } from '../commands/webhooks/bookPaymentEvent';
import type { StepResult } from '../commands/webhooks/steps';

export interface TestWebhookResult {
  ok: boolean;
  provider: string;
  event: { eventId: string; eventType: string; externalId: string | null; amount: string | null; currency: string | null } | null;
  steps: StepResult[];
}

/** Thrown inside the dry-run transaction to roll it back after capturing the result. */
class DryRunRollback extends Error {}

/** Verification in test-webhook never leaves the process: providers' sides are stubbed in memory. */
const noNetwork = (async (input: string | URL | Request) => {
  throw new TypeError(`test-webhook makes no network calls (${typeof input === 'string' ? input : input instanceof URL ? input.href : input.url})`);
}) as typeof fetch;

const SIGNED_WITH: Record<string, string> = {
  stripe: 'signed with the stored webhook secret and verified like a real delivery',
  bank: 'signed with the stored webhook secret and verified like a real delivery',
};

/**
 * POST /api/connectors/<slug>/test-webhook: the adapter's synthetic, correctly signed event through
 * the real verification and pipeline code, with nothing persisted. PayPal and Mollie are answered
 * by in-memory stubs (the fetch handed to verification reaches nothing else); the tenant is resolved
 * from the installation's URL token; bookPaymentEvent, the command the job books with, runs in a
 * transaction that is always rolled back, and no log row or job is written (docs/webhooks.md,
 * "test-webhook").
 */
export async function runTestWebhook(actor: Actor, slugRaw: string, cfg: PaymentProviderConfig): Promise<TestWebhookResult> {
  const slug = slugOrNotFound(slugRaw);
  const installation = await db()('connectorInstallations').where({ tenantId: actor.tenantId, provider: slug, active: true }).first();
  if (!installation) throw notFound('Connector installation');
  const secrets = decryptJson<ProviderSecrets>(installation.secretsEnc);
  const adapter = getAdapter(slug);
  const steps: StepResult[] = [];
  const fail = (event: NormalizedEvent | null): TestWebhookResult => ({ ok: false, provider: slug, event: summary(event), steps });

  let synthetic: SyntheticEvent | null = null;
  let event: NormalizedEvent;
  try {
    synthetic = await adapter.synthesizeTestEvent(secrets);
    const stub = synthetic.providerStub;
    event = await adapter.verifyAndParse(
      { rawBody: synthetic.rawBody, headers: synthetic.headers },
      { secrets, config: { ...cfg, ...stub?.config }, fetch: stub?.fetch ?? noNetwork },
    );
    steps.push({ step: 'signature', result: 'verified', detail: stub ? `${stub.detail}; verified by the ${slug} verification code` : SIGNED_WITH[slug] });
  } catch (err) {
    const reason = err instanceof SignatureError ? err.reason : err instanceof PayloadError || err instanceof ProviderUnavailableError ? err.code : 'error';
    steps.push({ step: 'signature', result: 'failed', detail: `${reason}: ${(err as Error).message}` });
    return fail(synthetic?.event ?? null);
  }

  const resolved = await findInstallationByToken(db(), slug, decryptSecret(installation.tokenEnc));
  if (!resolved || resolved.tenantId !== actor.tenantId) {
    steps.push({ step: 'tenant', result: 'failed', detail: 'the webhook URL token does not resolve to this installation' });
    return fail(event);
  }
  steps.push({ step: 'tenant', result: 'resolved', detail: `URL token resolves to installation ${resolved.id} of this tenant` });

  let pipelineSteps: StepResult[] = [];
  try {
    await db().transaction(async (trx) => {
      const result = await bookPaymentEvent({ trx, actor }, { event, settings: (installation.settings ?? {}) as ConnectorSettings });
      pipelineSteps = result.steps;
      throw new DryRunRollback();
    });
  } catch (err) {
    if (!(err instanceof DryRunRollback)) {
      steps.push({ step: 'invoice', result: 'failed', detail: (err as Error).message });
      return fail(event);
    }
  }
  steps.push(...pipelineSteps);
  return { ok: !steps.some((s) => s.result === 'failed'), provider: slug, event: summary(event), steps };
}

function summary(e: NormalizedEvent | null): TestWebhookResult['event'] {
  return e ? { eventId: e.eventId, eventType: e.eventType, externalId: e.externalId, amount: e.amount, currency: e.currency } : null;
}
