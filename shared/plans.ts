import type { Middleware } from 'koa';
import { db } from './db';
import { notFound, planLimit } from './errors';

/**
 * Plans and the features they include. Billing is out of scope (docs/auth.md, "Plan gating"): the plan is a
 * tenant column set at registration and changed by an admin in the settings.
 */
export type Plan = 'free' | 'pro' | 'business';
export const PLANS: Plan[] = ['free', 'pro', 'business'];

export type Feature = 'aiOfferDetails';

const FEATURES: Record<Feature, { plans: Plan[]; label: string }> = {
  // Spec, Limits: "The AI offer-details operation requires a Pro or Business plan."
  aiOfferDetails: { plans: ['pro', 'business'], label: 'AI offer details' },
};

export const planIncludes = (plan: Plan, feature: Feature) => FEATURES[feature].plans.includes(plan);

/** Throws 403 PLAN_LIMIT when the plan (or the tenant's plan) does not include the feature. */
export function requirePlan(tenantOrPlan: { plan: string } | string, feature: Feature): void {
  const plan = (typeof tenantOrPlan === 'string' ? tenantOrPlan : tenantOrPlan.plan) as Plan;
  if (!planIncludes(plan, feature)) {
    const f = FEATURES[feature];
    throw planLimit(`${f.label} requires the ${f.plans.join(' or ')} plan; this tenant has the ${plan} plan`);
  }
}

/** The current plan of a tenant, read from the database (never from the access token). */
export async function tenantPlan(tenantId: string): Promise<Plan> {
  const row = await db()('tenants').where({ id: tenantId }).first('plan');
  if (!row) throw notFound('Tenant');
  return row.plan as Plan;
}

/**
 * Route guard for a declarative route's `before`: `before: [planGate('aiOfferDetails')]`.
 * Runs after authentication, so ctx.state.actor is set.
 */
export function planGate(feature: Feature): Middleware {
  return async (ctx, next) => {
    const tenantId = ctx.state.actor?.tenantId as string | undefined;
    if (!tenantId) throw notFound('Tenant');
    requirePlan(await tenantPlan(tenantId), feature);
    await next();
  };
}
