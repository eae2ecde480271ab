/**
 * rendering: invoice PDFs/s and ZUGFeRD/s (10-item invoice), vs pdfkit drawing a similar page
 * (DejaVu Sans embedded as ours does, letterhead, address block, a 10-row table with rules,
 * totals, footer) with no I/O, N sequential iterations after a short warm-up, one core. The XML
 * e-invoices of the same invoice (XRechnung UBL and CII, Peppol UBL, ebInterface) per second and
 * ms per document, each vs fast-xml-parser's XMLBuilder writing the same document's tree (parsed
 * once from our output): the bare cost of serialising that XML, without our model mapping and
 * rule checks. Ours twice:
 * - in this process: shared/documents/renderDocument.ts alone, N sequential renders (the code's
 *   own cost, comparable page for page with the baseline);
 * - through one worker process, as production renders: N render jobs of N finalized invoices
 *   queued at once on the documents queue, and one `workers/index.ts` process (its sandboxed
 *   renderers, WORKER_CONCURRENCY_DOCUMENTS of them, read each invoice and store the artifact),
 *   timed from the first job added to the last artifact stored.
 */
import { XMLBuilder, XMLParser } from 'fast-xml-parser';
import { pdfkitInvoice, type Row } from './lib/pdfkitPage';
import { opsPerSecond } from './lib/measure';
import { queueAt, startWorkerProcess } from './lib/workerProcess';
import type { BenchContext, Benchmark, BenchRow } from './lib/types';
import type { DocumentKind } from '../../shared/documents/kinds';

export const rendering: Benchmark = {
  name: 'rendering',
  async run(ctx) {
    const n = Number(process.env.BENCH_RENDER_N ?? 100);
    const { renderDocument } = await import('../../shared/documents/renderDocument');
    const { makeDocumentInput, manyItems } = await import('../formats/pdf/fixtures');
    const input = eInvoiceReady(makeDocumentInput({ items: manyItems(10) }));
    const rows = input.invoice.items as Row[];

    const pdf = await opsPerSecond(n, () => renderDocument('pdf', input));
    ctx.log(
      `  ours pdf:      ${pdf.perSec.toFixed(1)}/s (${n} in ${pdf.ms.toFixed(0)} ms, ${((await renderDocument('pdf', input)).length / 1024).toFixed(0)} KiB)`,
    );
    const zugferd = await opsPerSecond(n, () => renderDocument('zugferd', input));
    ctx.log(
      `  ours zugferd:  ${zugferd.perSec.toFixed(1)}/s (${n} in ${zugferd.ms.toFixed(0)} ms, ${((await renderDocument('zugferd', input)).length / 1024).toFixed(0)} KiB)`,
    );
    const base = await opsPerSecond(n, () => pdfkitInvoice(rows));
    ctx.log(`  pdfkit page:   ${base.perSec.toFixed(1)}/s (${n} in ${base.ms.toFixed(0)} ms, ${((await pdfkitInvoice(rows)).length / 1024).toFixed(0)} KiB)`);
    const results: BenchRow[] = [
      {
        name: 'rendering pdf',
        metric: 'documents/s',
        ours: pdf.perSec,
        baseline: base.perSec,
        better: 'higher',
        notes: ['in the benchmark process, sequential'],
      },
      {
        name: 'rendering zugferd',
        metric: 'documents/s',
        ours: zugferd.perSec,
        baseline: base.perSec,
        better: 'higher',
        notes: ['in the benchmark process, sequential'],
      },
    ];
    const bareByKind = new Map<DocumentKind, number>([
      ['pdf', base.perSec],
      ['zugferd', base.perSec],
    ]);
    for (const kind of XML_KINDS) {
      const bytes = await renderDocument(kind, input);
      const ours = await opsPerSecond(n, () => renderDocument(kind, input));
      // The bare baseline: the same document's tree written by a general XML serialiser.
      const tree = new XMLParser({ preserveOrder: true, ignoreAttributes: false, parseTagValue: false, trimValues: false }).parse(bytes);
      const builder = new XMLBuilder({ preserveOrder: true, ignoreAttributes: false, suppressEmptyNode: true });
      const bare = await opsPerSecond(n, async () => builder.build(tree));
      bareByKind.set(kind, bare.perSec);
      const perDoc = ours.ms / n;
      ctx.log(
        `  ours ${kind}:${' '.repeat(14 - kind.length)}${ours.perSec.toFixed(0)}/s, ${perDoc.toFixed(2)} ms per document (${(bytes.length / 1024).toFixed(0)} KiB); XMLBuilder ${bare.perSec.toFixed(0)}/s`,
      );
      results.push({
        name: `rendering ${kind}`,
        metric: 'documents/s',
        ours: ours.perSec,
        baseline: bare.perSec,
        better: 'higher',
        notes: [`in the benchmark process, sequential; ${perDoc.toFixed(2)} ms per document; baseline: XMLBuilder writing the same tree`],
      });
    }
    for (const { kind, ...r } of await throughWorkerProcess(ctx, n)) results.push({ ...r, baseline: bareByKind.get(kind) ?? null, better: 'higher' });
    return results;
  },
};

const XML_KINDS = ['xrechnung-ubl', 'xrechnung-cii', 'peppol-ubl', 'ebinterface'] as const satisfies DocumentKind[];
const ALL_KINDS = ['pdf', 'zugferd', ...XML_KINDS] as const satisfies DocumentKind[];
/** What XRechnung and Peppol require beyond ZUGFeRD: the seller contact (BR-DE-5/6/7) and a buyer reference (BR-DE-15). */
const E_INVOICE_CUSTOMER = {
  name: 'Jürgen Größl',
  company: 'Größl & Söhne KG',
  email: 'buchhaltung@groessl.example',
  address: 'Landstraße 12\n4020 Linz',
  vatId: 'ATU87654321',
};
const CONTACT = { contactName: 'Buchhaltung', contactPhone: '+43 1 234 56 78', contactEmail: 'buchhaltung@alpen.example' };
function eInvoiceReady<T extends { seller: object; invoice: object }>(input: T): T {
  return { ...input, seller: { ...input.seller, ...CONTACT }, invoice: { ...input.invoice, buyerReference: 'KST-4711', orderReference: 'PO-12' } };
}

/**
 * Documents/s of one worker process: n finalized 10-item invoices of an e-invoice-ready tenant,
 * one render job each (as GET …/pdf queues it: the job id is the business key), all queued at
 * once, the worker working them off with its sandboxed renderers. The worker runs under a Redis
 * prefix of its own, so it sees only these jobs (no e-mail jobs of the invoices' sending, no
 * webhook jobs other benchmarks left queued) and relays no outbox rows but its own (none).
 */
async function throughWorkerProcess(ctx: BenchContext, n: number): Promise<Array<Omit<BenchRow, 'baseline' | 'better'> & { kind: DocumentKind }>> {
  const prefix = `${ctx.env.redisPrefix}:render`;
  const worker = await startWorkerProcess({ readyQueue: 'documents', env: { REDIS_PREFIX: prefix } });
  try {
    const measured = await renderThroughWorker({ n, kinds: ALL_KINDS, prefix, treeCpuSeconds: worker.treeCpuSeconds, log: ctx.log });
    return measured.map(({ kind, perSec, line }) => ({
      kind,
      name: `rendering ${kind}, one worker process`,
      metric: 'documents/s',
      ours: perSec,
      notes: [`queued at once, invoice read and artifact stored; ${line}`],
    }));
  } finally {
    await worker.close();
  }
}

/**
 * The rendering benchmarks' tenant (Austrian, e-invoice ready) and `count` sent 10-item invoices
 * of its customer, with their versions (a render job's key).
 */
export async function renderBenchInvoices(count: number) {
  const { createTeam } = await import('../helpers/factories');
  const { createCustomer, createSentInvoice } = await import('../helpers/invoiceFactory');
  const { manyItems } = await import('../formats/pdf/fixtures');
  const { db } = await import('../../shared/db');
  const { tenant, admin } = await createTeam({
    country: 'AT',
    name: 'Alpen Software GmbH',
    address: 'Mariahilfer Straße 1\n1060 Wien',
    settings: JSON.stringify(CONTACT),
  });
  const customer = await createCustomer(tenant, { ...E_INVOICE_CUSTOMER, buyerReference: 'KST-4711' });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await createSentInvoice(tenant, admin, { customerId: customer.id, items: manyItems(10) })).id);
  const invoices: { id: string; version: number }[] = await db()('invoices').whereIn('id', ids).select('id', 'version');
  // In creation order (the warm-up takes the first ones).
  const order = new Map(ids.map((id, i) => [id, i]));
  invoices.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
  return { tenant, invoices };
}

export interface RenderedThroughWorker {
  kind: DocumentKind;
  perSec: number;
  /** CPU of the worker process and its sandboxed renderers per document. */
  cpuMsPerDoc: number;
  /** Wall ms per document, each job's queued → stored (p50/p95/p99 over the jobs). */
  latencyMs: { p50: number; p95: number; p99: number };
  line: string;
}

/**
 * Documents per sandboxed renderer and kind before a measured batch, and pdfkit pages for the
 * baseline's process (deployed.ts): a renderer lives as long as its worker and renders thousands
 * of documents; with 4 per renderer the measured batch paid V8's warm-up five times over, with 20
 * and 100 per kind still much of it (docs/benchmarks.md, "Rendering CPU per document" and
 * "Rendering measured at steady state").
 */
export const RENDER_WARMUP = Number(process.env.BENCH_RENDER_WARMUP ?? 50);

/**
 * The measurement itself, for any running worker process that takes the `documents` queue under
 * `prefix` (a forked one here, the Procfile's worker in the deployed shape): creates the tenant
 * and its n + warm-up invoices, queues the render jobs of each kind at once, waits until every
 * artifact is stored.
 */
export async function renderThroughWorker(opts: {
  n: number;
  kinds: readonly DocumentKind[];
  prefix: string;
  treeCpuSeconds: () => number;
  /** CPU seconds of the worker's main process alone (the rest of the tree is its renderers), for the split in the log line. */
  mainCpuSeconds?: () => number;
  log: (line: string) => void;
}): Promise<RenderedThroughWorker[]> {
  const { n } = opts;
  const { db } = await import('../../shared/db');
  const { renderJobId } = await import('../../shared/documents/kinds');
  const { loadConfig } = await import('../../shared/config');
  const { concurrencyFor } = await import('../../workers/worker');
  const { percentile } = await import('./lib/measure');
  const k = db();

  const renderers = concurrencyFor(loadConfig(process.env), 'documents');
  // Warm-up jobs of each kind: each sandboxed renderer starts, loads its modules and parses the
  // fonts, and gets as many documents to warm its JIT as the baseline's one process gets pages.
  const warmupN = RENDER_WARMUP * renderers;
  const { tenant, invoices } = await renderBenchInvoices(warmupN + n);
  const ids = invoices.map((r) => r.id);
  const versions = new Map(invoices.map((r) => [r.id, r.version]));

  const { queue, close: closeQueue } = queueAt('documents', opts.prefix);
  await settleSendingEmails(opts.prefix, opts.log);
  // The e-mail jobs attached a PDF of each invoice and stored it as its artifact: removed, so
  // every render job measured renders (a stored artifact ends a job at once).
  await k('documents').where({ tenantId: tenant.id }).del();
  /** Queues one render job per invoice and waits until every artifact is stored; wall ms, worker CPU ms and per-job latencies. */
  const renderAll = async (kind: DocumentKind, invoiceIds: string[]) => {
    const cpu0 = opts.treeCpuSeconds();
    const main0 = opts.mainCpuSeconds?.() ?? 0;
    const t0 = performance.now();
    const queuedAt = Date.now();
    const jobs = await queue.addBulk(
      invoiceIds.map((invoiceId) => {
        const version = versions.get(invoiceId)!;
        return {
          name: 'render-invoice-document',
          data: { tenantId: tenant.id, invoiceId, kind, version },
          opts: { jobId: renderJobId(kind, invoiceId, version) },
        };
      }),
    );
    const deadline = Date.now() + 10 * 60_000;
    for (;;) {
      const [{ stored }] = await k('documents').where({ tenantId: tenant.id, kind }).whereIn('invoiceId', invoiceIds).count({ stored: '*' });
      if (Number(stored) === invoiceIds.length) break;
      const failed = await queue.getFailed(0, 0);
      if (failed.length) throw new Error(`a render job failed: ${failed[0].failedReason}`);
      if (Date.now() > deadline) throw new Error(`${invoiceIds.length - Number(stored)} ${kind} documents still not stored after 10 minutes`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const ms = performance.now() - t0;
    const cpuMs = (opts.treeCpuSeconds() - cpu0) * 1000;
    const mainMs = ((opts.mainCpuSeconds?.() ?? 0) - main0) * 1000;
    // Queued → finished per job, from BullMQ's own timestamps (the jobs are kept on completion).
    const finished = await Promise.all(jobs.map((j) => queue.getJob(j.id!)));
    const waits = finished.filter((j) => j?.finishedOn).map((j) => j!.finishedOn! - queuedAt);
    return { ms, cpuMs, mainMs, waits };
  };
  try {
    // Warm-up: the sandboxed renderers start (and load their modules) with their first jobs.
    for (const kind of opts.kinds) await renderAll(kind, ids.slice(0, warmupN));
    const out: RenderedThroughWorker[] = [];
    for (const kind of opts.kinds) {
      const { ms, cpuMs, mainMs, waits } = await renderAll(kind, ids.slice(warmupN));
      const perSec = (n * 1000) / ms;
      const split = opts.mainCpuSeconds ? ` (main process ${(mainMs / n).toFixed(1)}, renderers ${((cpuMs - mainMs) / n).toFixed(1)})` : '';
      const line = `${n} in ${ms.toFixed(0)} ms, ${renderers} sandboxed renderers warmed with ${warmupN / renderers} documents each, worker CPU ${(cpuMs / n).toFixed(1)} ms per document${split}`;
      opts.log(`  one worker process, ${kind}:${' '.repeat(14 - kind.length)}${perSec.toFixed(1)}/s (${line})`);
      out.push({
        kind,
        perSec,
        cpuMsPerDoc: cpuMs / n,
        latencyMs: { p50: percentile(waits, 50), p95: percentile(waits, 95), p99: percentile(waits, 99) },
        line,
      });
    }
    return out;
  } finally {
    await closeQueue();
  }
}

/**
 * Sending the invoices queued one e-mail job each (through the outbox), and a worker on `prefix`
 * works them off in its e-mail renderers: each renders the invoice's PDF to attach it and stores
 * it. Until 2026-11-27 those jobs ran during the measured batches, so the worker's CPU per
 * document included them, and PDF jobs found their artifacts already stored. Waits (bounded)
 * until none is pending on `prefix`; a worker under another prefix never sees them.
 */
async function settleSendingEmails(prefix: string, log: (line: string) => void): Promise<void> {
  const { db } = await import('../../shared/db');
  const { queue, close } = queueAt('email', prefix);
  try {
    const deadline = Date.now() + 3 * 60_000;
    for (;;) {
      const [{ relaying }] = await db()('outbox').where({ prefix, queue: 'email' }).whereNull('enqueuedAt').count({ relaying: '*' });
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      const pending = Number(relaying) + Object.values(counts).reduce((a, b) => a + b, 0);
      if (pending === 0) return;
      if (Date.now() > deadline) {
        log(`  (${pending} e-mail jobs still pending after 3 minutes; measuring anyway)`);
        return;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await close();
  }
}
