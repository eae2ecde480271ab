/**
 * Profile helper (on demand, not part of npm run bench): the documents job as a sandboxed renderer
 * runs it (workers/jobs/documents/renderInvoiceDocument.ts: artifact check, invoice snapshot,
 * render, store), called in this process for n finalized 10-item invoices of the benchmark's
 * e-invoice-ready tenant, so a CPU profile shows what a renderer spends beside the rendering:
 *   NODE_ENV=production LOG_LEVEL=info node --import tsx test/bench/profileRenderJob.ts [n] [pdf|zugferd] [out.cpuprofile]
 * Prints CPU per job (this process; PostgreSQL's share is not in it); with a third argument, writes
 * the CPU profile of the measured jobs alone (not the seeding) there.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { prepareBenchEnv } from './lib/env';

const n = Number(process.argv[2] ?? 200);
const kind = (process.argv[3] ?? 'pdf') as 'pdf' | 'zugferd';
const env = await prepareBenchEnv();
try {
  const { db } = await import('../../shared/db');
  const { renderInvoiceDocumentJob } = await import('../../workers/jobs/documents/renderInvoiceDocument');
  const { renderBenchInvoices } = await import('./rendering');
  const k = db();
  const { tenant, invoices: rows } = await renderBenchInvoices(n);
  const jobOf = (r: { id: string; version: number }) => ({ data: { tenantId: tenant.id, invoiceId: r.id, kind, version: r.version } }) as never;
  const run = async (part: typeof rows) => {
    await k('documents').where({ tenantId: tenant.id }).del();
    const t0 = process.cpuUsage();
    for (const r of part) await renderInvoiceDocumentJob(jobOf(r));
    const d = process.cpuUsage(t0);
    return (d.user + d.system) / 1000 / part.length;
  };
  await run(rows.slice(0, Math.min(40, n))); // warm-up
  const out = process.argv[4];
  const session = new Session();
  if (out) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  console.log(`${kind}: ${(await run(rows)).toFixed(2)} ms CPU per job (${n} jobs)`);
  if (out) writeFileSync(out, JSON.stringify((await session.post('Profiler.stop')).profile));
} finally {
  await env.cleanup();
}
process.exit(0);
