import { relayOutbox } from '../../../shared/outbox';

/** Drains outbox rows the API could not relay right after commit (e.g. Redis was down). */
export async function relayOutboxJob() {
  let total = 0;
  for (;;) {
    const sent = await relayOutbox({ limit: 200 });
    total += sent;
    if (sent < 200) return { relayed: total };
  }
}
