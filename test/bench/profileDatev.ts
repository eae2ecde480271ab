/**
 * Profile helper (on demand, not part of npm run bench): the DATEV export of a seeded tenant in
 * this process, consumed as a download, alternating with the bench's plain cursor CSV; CPU of this
 * process (user + system) per round. `node --cpu-prof --import tsx test/bench/profileDatev.ts
 * [invoices] [rounds]` shows only the export's path. DATEV_PROFILE_DB=<name> keeps the seeded
 * database under that name for the next run (drop it yourself afterwards); DATEV_PROFILE_ONLY=ours
 * leaves the plain cursor out.
 */
import pg from 'pg';
import { prepareBenchEnv } from './lib/env';
import { seedInvoices } from './lib/seed';
import { plainCsvExport } from './lib/bareRoutes';
import { ensureDatabase } from '../../scripts/services';

const total = Number(process.argv[2] ?? 100_000);
const rounds = Number(process.argv[3] ?? 3);
const keep = process.env.DATEV_PROFILE_DB;
const env = keep
  ? await (async () => {
      const url = await ensureDatabase(process.env.DATABASE_URL!, keep);
      process.env.DATABASE_URL = url;
      process.env.LOG_LEVEL ??= 'warn';
      const { migrateLatest } = await import('../../shared/db');
      await migrateLatest(url);
      return { url, cleanup: async () => (await import('../../shared/db')).closeDb() };
    })()
  : await prepareBenchEnv();
try {
  const { db } = await import('../../shared/db');
  const { loadReportTenant } = await import('../../shared/queries/reports/vatReturn');
  const { datevExportChunks, datevMeta } = await import('../../shared/queries/reports/datev');
  const { datevCsvTextStream } = await import('../../shared/formats/datev/extfBuchungsstapel');
  const { quarterPeriod } = await import('../../shared/domain/tax/period');
  const existing = keep ? await db()('tenants').where({ name: 'Bench GmbH' }).first('id') : undefined;
  const seeded = existing ? { tenantId: existing.id as string } : await seedInvoices(env.url, db(), total);
  const tenant = await loadReportTenant(db(), seeded.tenantId);
  const year = { ...quarterPeriod(2026, 1), start: '2026-01-01', end: '2026-12-31', label: '2026' };
  const plain = new pg.Client({ connectionString: env.url });
  await plain.connect();
  const cpuMs = async (f: () => Promise<number>) => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const bytes = await f();
    const c = process.cpuUsage(c0);
    return { cpu: (c.user + c.system) / 1000, wall: performance.now() - t0, bytes };
  };
  const ours = () =>
    cpuMs(async () => {
      let bytes = 0;
      for await (const chunk of datevCsvTextStream(datevMeta(tenant, year), datevExportChunks(tenant, year, db())) as AsyncIterable<Buffer>)
        bytes += chunk.length;
      return bytes;
    });
  const bare = () =>
    cpuMs(async () => {
      let bytes = 0;
      // Encoded as the bare route's socket write encodes it (latin1).
      await plainCsvExport(plain, seeded.tenantId, year.start, year.end, (chunk) => {
        bytes += Buffer.from(chunk, 'latin1').length;
      });
      return bytes;
    });
  await ours();
  await bare();
  for (let r = 0; r < rounds; r++) {
    const o = await ours();
    // DATEV_PROFILE_ONLY=ours: a profile of the export alone.
    const b = process.env.DATEV_PROFILE_ONLY === 'ours' ? o : await bare();
    console.log(
      `round ${r + 1}: ours ${o.cpu.toFixed(0)} ms CPU (${o.wall.toFixed(0)} wall, ${(o.bytes / 1e6).toFixed(1)} MB); plain ${b.cpu.toFixed(0)} ms CPU (${b.wall.toFixed(0)} wall, ${(b.bytes / 1e6).toFixed(1)} MB); ratio ${(o.cpu / b.cpu).toFixed(2)}`,
    );
  }
  await plain.end();
} finally {
  await env.cleanup();
}
process.exit(0);
