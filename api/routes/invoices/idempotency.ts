import type { Knex } from 'knex';
import type { AppContext } from '../../routing';
import { withIdempotency, type IdempotentResponse } from '../../../shared/idempotency';

/**
 * Route helper: run `work` in a transaction honouring the Idempotency-Key header. The route key
 * is method + concrete path, so a key is scoped to one invoice for …/send and …/payments.
 * A replayed answer carries `Idempotent-Replayed: true`.
 */
export async function respondIdempotently(ctx: AppContext, work: (trx: Knex.Transaction) => Promise<IdempotentResponse>): Promise<void> {
  const key = ctx.get('Idempotency-Key') || null;
  const res = await withIdempotency({ tenantId: ctx.state.actor.tenantId, route: `${ctx.method} ${ctx.path}`, key, request: ctx.input.body ?? {} }, work);
  ctx.status = res.status;
  ctx.body = res.body;
  if (res.replayed) ctx.set('Idempotent-Replayed', 'true');
}
