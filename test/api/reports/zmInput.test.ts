import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';

let server: Awaited<ReturnType<typeof startTestServer>>;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

describe('GET /api/reports/zm: bad input', () => {
  it('refuses a period that is not one month or one quarter, an unknown format, and an anonymous caller', async () => {
    const { viewer } = await createTeam({ country: 'AT', taxNumber: '12-345/6789' });
    const http = client(server.url, { token: viewer.token });
    for (const path of [
      '/api/reports/zm?year=2026&month=3&quarter=1',
      '/api/reports/zm?month=3',
      '/api/reports/zm?year=2026&month=13',
      '/api/reports/zm?year=2026&month=3&format=pdf',
    ]) {
      const res = await http.get(path);
      expect(res.status, path).toBe(400);
      expect(['INVALID_INPUT', 'MISSING_FIELD'], path).toContain(res.body.error.code);
    }
    expect((await client(server.url).get('/api/reports/zm?year=2026&month=3')).status).toBe(401);
  });
});
