/**
 * einvoice-import: inbound e-invoices imported per second by one worker process (issue 28), vs
 * the reader alone. N XRechnung documents of a German supplier (half UBL, half CII, 4 lines at
 * 19 % and 7 %, each its own number) for one German tenant:
 * - ours: the files stored as uploads (receiveIncomingEinvoice, the command behind
 *   POST /api/incoming-einvoices), then one import job each queued at once on the documents queue
 *   (as the outbox relay queues them: the catalog's job id), and one `workers/index.ts` process
 *   (Procfile: worker) working them off in its sandboxed processes: read, reconcile, match the
 *   supplier, book the incoming invoice; timed from the first job added to the last row settled;
 * - baseline: readEInvoice + reconcile on the same bytes in this process, sequential: the parsing
 *   and checking alone, without the queue, the database and the booking.
 * Every document must end `imported` (else the benchmark fails). Imports of one tenant book one at
 * a time (a per-tenant advisory lock, docs/e-invoicing-inbound.md), so this is one tenant's bulk
 * upload; the reading runs in parallel in the sandboxed processes.
 */
import { opsPerSecond } from './lib/measure';
import { queueAt, startWorkerProcess } from './lib/workerProcess';
import type { Benchmark, BenchRow } from './lib/types';

const TENANT = { country: 'DE', name: 'Kunden AG Mitte', vatId: 'DE136695976', address: 'Kundenstraße 15\n60311 Frankfurt am Main' };

export const einvoiceImport: Benchmark = {
  name: 'einvoice-import',
  async run(ctx) {
    const n = Number(process.env.BENCH_IMPORT_N ?? 200);
    const { renderDocument } = await import('../../shared/documents/renderDocument');
    const { readEInvoice, reconcile } = await import('../../shared/formats/inbound/readEInvoice');
    const { makeDocument, sellerDE, customerDE, mixedItemsDE } = await import('../formats/cii/fixtures');
    const { createTeam } = await import('../helpers/factories');
    const { db } = await import('../../shared/db');
    const { systemActor } = await import('../../shared/actor');
    const { receiveIncomingEinvoice } = await import('../../shared/commands/incomingEinvoices/receive');
    const { jobs } = await import('../../shared/jobs/catalog');
    const { loadConfig } = await import('../../shared/config');
    const { concurrencyFor } = await import('../../workers/worker');
    const k = db();

    const seller = { ...sellerDE, contactName: 'Buchhaltung', contactPhone: '+49 89 1234567', contactEmail: 'rechnung@lieferant.de' };
    const customer = { ...customerDE, company: TENANT.name, vatId: TENANT.vatId, address: TENANT.address };
    const renderers = concurrencyFor(loadConfig(process.env), 'documents');
    const warmupN = 4 * renderers;
    /** Document i: UBL for even i, CII for odd; its own number, so none is a duplicate of another. */
    const files: Buffer[] = [];
    for (let i = 0; i < warmupN + n; i++) {
      const input = makeDocument(seller, customer, {
        number: `RE-2026-${String(i + 1).padStart(5, '0')}`,
        itemSpecs: mixedItemsDE,
        buyerReference: 'KST-4711',
      });
      files.push(await renderDocument(i % 2 === 0 ? 'xrechnung-ubl' : 'xrechnung-cii', input));
    }
    const timed = files.slice(warmupN);

    // Baseline: the reader and the reconciliation alone, in this process.
    let i = 0;
    const bare = await opsPerSecond(n, async () => {
      const r = await readEInvoice(timed[i++ % n], 'application/xml');
      if (!r.ok || !reconcile(r.invoice).matches) throw new Error('our own XRechnung did not read back');
    });
    ctx.log(`  readEInvoice + reconcile: ${bare.perSec.toFixed(0)}/s (${n} in ${bare.ms.toFixed(0)} ms, ${(bare.ms / n).toFixed(2)} ms per document)`);

    const { tenant } = await createTeam(TENANT);
    const upload = async (bytes: Buffer[]) => {
      const ids: string[] = [];
      for (const b of bytes) {
        const row = await k.transaction((trx) =>
          receiveIncomingEinvoice({ trx, actor: systemActor(tenant.id) }, { bytes: b, mediaType: 'application/xml', supplierIdHint: null }),
        );
        ids.push(row.id);
      }
      return ids;
    };
    const t0 = performance.now();
    const warmIds = await upload(files.slice(0, warmupN));
    const ids = await upload(timed);
    const uploadMs = performance.now() - t0;
    ctx.log(`  stored ${warmupN + n} uploads in ${uploadMs.toFixed(0)} ms (${(((warmupN + n) * 1000) / uploadMs).toFixed(0)}/s, in this process)`);

    // A Redis prefix of its own: the worker sees only these jobs (the outbox rows the uploads wrote
    // notify the benchmark's prefix, which no worker serves; a job the relay would add has the same id).
    const prefix = `${ctx.env.redisPrefix}:import`;
    const { queue, close: closeQueue } = queueAt('documents', prefix);
    const worker = await startWorkerProcess({ readyQueue: 'documents', env: { REDIS_PREFIX: prefix } });
    const def = jobs.importIncomingEinvoice;
    const importAll = async (incomingIds: string[]) => {
      const cpu0 = worker.treeCpuSeconds();
      const start = performance.now();
      await queue.addBulk(
        incomingIds.map((incomingId) => {
          const data = { tenantId: tenant.id, incomingId };
          return { name: def.name, data, opts: { jobId: def.jobId(data) } };
        }),
      );
      const deadline = Date.now() + 10 * 60_000;
      for (;;) {
        const [{ open }] = await k('incomingEinvoices').whereIn('id', incomingIds).whereIn('status', ['queued', 'processing']).count({ open: '*' });
        if (Number(open) === 0) break;
        const failed = await queue.getFailed(0, 0);
        if (failed.length) throw new Error(`an import job failed: ${failed[0].failedReason}`);
        if (Date.now() > deadline) throw new Error(`${open} imports still open after 10 minutes`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const ms = performance.now() - start;
      const notImported = await k('incomingEinvoices').whereIn('id', incomingIds).whereNot('status', 'imported').select('status', 'errors');
      if (notImported.length) throw new Error(`${notImported.length} documents not imported, e.g. ${JSON.stringify(notImported[0])}`);
      return { ms, cpuMs: (worker.treeCpuSeconds() - cpu0) * 1000 };
    };
    try {
      // Warm-up: the sandboxed processes start, load their modules, create the supplier.
      await importAll(warmIds);
      const { ms, cpuMs } = await importAll(ids);
      const perSec = (n * 1000) / ms;
      const line = `${n} in ${ms.toFixed(0)} ms, ${renderers} sandboxed processes, worker CPU ${(cpuMs / n).toFixed(1)} ms per import`;
      ctx.log(`  one worker process: ${perSec.toFixed(1)} imports/s (${line})`);
      const [{ count }] = await k('invoices').where({ tenantId: tenant.id, type: 'eingangsrechnung' }).count({ count: '*' });
      if (Number(count) !== warmupN + n) throw new Error(`${count} incoming invoices for ${warmupN + n} documents`);
      const row: BenchRow = {
        name: 'einvoice-import, one worker process',
        metric: 'imports/s',
        ours: perSec,
        baseline: bare.perSec,
        better: 'higher',
        notes: [`XRechnung UBL and CII, one tenant, queued at once; ${line}; baseline: readEInvoice + reconcile in-process`],
      };
      return [row];
    } finally {
      await worker.close();
      await closeQueue();
    }
  },
};
