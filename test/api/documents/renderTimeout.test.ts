import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createSentInvoice } from '../../helpers/invoiceFactory';
import { startWorkers } from '../../../workers/worker';

let server: Awaited<ReturnType<typeof startTestServer>>;
beforeAll(async () => {
  server = await startTestServer({ RENDER_WAIT_MS: '300' });
});
afterAll(async () => server.close());

it('without a free worker the API answers 503 + Retry-After, and serves the document once a worker rendered it', async () => {
  const { tenant, admin } = await createTeam();
  const inv = await createSentInvoice(tenant, admin);
  const http = client(server.url, { token: admin.token });
  const res = await http.get(`/api/invoices/${inv.id}/pdf`);
  expect(res.status).toBe(503);
  // The job waits for a worker: a retry joins it and waits again, so "now" is the honest answer.
  expect(res.headers.get('retry-after')).toBe('1');
  expect(res.body.error.status).toBe(503);

  const workers = await startWorkers({ queues: ['documents'], schedule: false, sandbox: false });
  try {
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await http.get(`/api/invoices/${inv.id}/pdf`)).status;
    }
    expect(status).toBe(200);
  } finally {
    await workers.close();
  }
});
