import { expect } from 'vitest';
import type { TestClient } from './http';
import { waitUntil } from './waitUntil';

/** The statuses an import ends in (docs/e-invoicing-inbound.md, "The import job"). */
const FINAL = ['imported', 'duplicate', 'rejected'];

/**
 * Waits until the import job has settled an upload and returns its row. The first import of a
 * test file starts the sandboxed documents worker's child process, which on a loaded CI host
 * takes a while: hence the long default.
 */
export function settledImport(http: TestClient, token: string, id: string, what = `the import of ${id}`, timeoutMs = 110_000) {
  return waitUntil(
    async () => {
      const res = await http.get(`/api/incoming-einvoices/${id}`, { token });
      return FINAL.includes(res.body.status) ? res.body : null;
    },
    what,
    timeoutMs,
  );
}

/** Uploads a file as the body (202 expected) and waits for its import to settle. */
export async function uploadAndSettle(
  http: TestClient,
  team: { member: { token: string }; viewer: { token: string } },
  bytes: Buffer,
  contentType = 'application/xml',
  what?: string,
) {
  const res = await http.request('POST', '/api/incoming-einvoices', { token: team.member.token, rawBody: bytes, headers: { 'content-type': contentType } });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return settledImport(http, team.viewer.token, res.body.id, what);
}
