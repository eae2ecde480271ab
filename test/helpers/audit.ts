import { expect } from 'vitest';
import { db } from '../../shared/db';

/**
 * Audit-log assertions: a change writes exactly the audit rows it should (who, what, which
 * entity, when), in the tenant of the change. `track` counts the tenant's rows around one call,
 * so a transition that writes none (or two) is caught, not only a missing action name.
 */
export interface ExpectedAudit {
  action: string;
  entityType: string;
  entityId: string;
  actorUserId: string;
}

const rowsOf = (tenantId: string) => db()('auditLog').where({ tenantId }).orderBy('id');

/** Run `fn`, then expect the tenant's audit log to have grown by exactly `expected`, in order. */
export async function track<T>(tenantId: string, expected: (result: T) => ExpectedAudit[], fn: () => Promise<T>): Promise<T> {
  const before = await rowsOf(tenantId);
  const startedAt = Date.now();
  const result = await fn();
  const after = await rowsOf(tenantId);
  const added = after.slice(before.length);
  const want = expected(result);
  expect(added.map((r) => r.action)).toEqual(want.map((w) => w.action));
  want.forEach((w, i) => {
    expect(added[i]).toMatchObject({ tenantId, action: w.action, entityType: w.entityType, entityId: w.entityId, actorUserId: w.actorUserId });
    // "when": the row's timestamp is the time of the change (1 s slack for clock granularity).
    expect(added[i].createdAt).toBeInstanceOf(Date);
    expect(added[i].createdAt.getTime()).toBeGreaterThanOrEqual(startedAt - 1000);
    expect(added[i].createdAt.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
  });
  return result;
}
