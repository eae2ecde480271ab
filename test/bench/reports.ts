/**
 * reports: U30 (VAT return) aggregation and the DATEV export over the tenant with 1,000,000
 * invoices (lib/seed.ts: 900k sales, 100k incoming, one item each, 90k payments), time and peak
 * RSS of this process; the DATEV stream is consumed as a download would be, with RSS printed at
 * 100k and 1M rows: flat memory shows that it streams. Baselines: one plain SQL aggregate over the
 * same rows (U30), a plain pg cursor writing the same rows as 125-column lines by string
 * concatenation (DATEV, lib/bareRoutes.ts).
 *
 * Part of the runners (npm run bench:in-process -- reports; the deployed shape's DATEV download: deployed.ts); `npx tsx test/bench/reports.ts` still works and
 * runs just this one. BENCH_INVOICES=200000 makes a smaller run.
 */
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { liveHeap, mb, timed } from './lib/measure';
import { plainCsvExport } from './lib/bareRoutes';
import type { BenchRow, Benchmark } from './lib/types';

const SALES_STATUSES = ['offen', 'teilbezahlt', 'bezahlt', 'storniert'];

/** U30-like sums with one statement: net and tax per type and rate for the period. */
async function plainVatSums(client: pg.Client, tenantId: string, start: string, end: string) {
  const { rows } = await client.query(
    `select i.type, tb->>'taxRate' as rate, sum((tb->>'net')::numeric) as net, sum((tb->>'tax')::numeric) as tax
       from invoices i cross join lateral jsonb_array_elements(i.tax_breakdown) tb
      where i.tenant_id = $1 and i.deleted_at is null
        and ((i.type in ('rechnung', 'gutschrift') and i.status = any($4) and i.issue_date between $2 and $3)
          or (i.type = 'eingangsrechnung' and i.status not in ('entwurf', 'storniert') and i.invoice_date between $2 and $3))
      group by 1, 2`,
    [tenantId, start, end, SALES_STATUSES],
  );
  return rows;
}

export const reports: Benchmark = {
  name: 'reports',
  async run(ctx) {
    const seeded = await ctx.seeded();
    const { db } = await import('../../shared/db');
    const { loadVatAggregates } = await import('../../shared/queries/reports/vatAggregates');
    const { loadReportTenant, vatReturnReport } = await import('../../shared/queries/reports/vatReturn');
    const { datevExportChunks, datevMeta } = await import('../../shared/queries/reports/datev');
    const { datevCsvTextStream } = await import('../../shared/formats/datev/extfBuchungsstapel');
    const { monthPeriod, quarterPeriod } = await import('../../shared/domain/tax/period');
    const k = db();
    const s = ctx.sampler;
    const plain = new pg.Client({ connectionString: ctx.env.url });
    await plain.connect();
    const rows: BenchRow[] = [];
    const line = (label: string, t: { ms: number; peakRss: number }) =>
      ctx.log(`  ${label.padEnd(46)} ${t.ms.toFixed(0).padStart(7)} ms   peak RSS ${mb(t.peakRss)}`);
    try {
      const t = await loadReportTenant(k, seeded.tenantId);
      const march = monthPeriod(2026, 3);
      const q1 = quarterPeriod(2026, 1);
      const year = { ...q1, start: '2026-01-01', end: '2026-12-31', label: '2026' };
      await vatReturnReport(k, t, march); // warm-up (plans, caches)
      await plainVatSums(plain, seeded.tenantId, march.start, march.end);

      for (const [label, period, run] of [
        ['U30 month (2026-03)', march, () => vatReturnReport(k, t, march)],
        ['U30 quarter (2026-Q1)', q1, () => vatReturnReport(k, t, q1)],
        ['U30 aggregates, whole year', year, () => loadVatAggregates(k, t, year)],
      ] as const) {
        const ours = await timed(s, run as () => Promise<unknown>);
        line(`ours  ${label}`, ours);
        const base = await timed(s, () => plainVatSums(plain, seeded.tenantId, period.start, period.end));
        line(`plain ${label}`, base);
        rows.push({ name: `reports ${label}`, metric: 'ms', ours: ours.ms, baseline: base.ms, better: 'lower', notes: [`peak RSS ${mb(ours.peakRss)}`] });
      }

      const consume = async (period: typeof march, marks: number[] = []) => {
        const stream = datevCsvTextStream(datevMeta(t, period), datevExportChunks(t, period, k));
        let lines = -2; // the two header lines
        let bytes = 0;
        const seen: Array<{ rows: number; rss: number; heap: number }> = [];
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          bytes += chunk.length;
          for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines++;
          while (marks.length && lines >= marks[0]) seen.push({ rows: marks.shift()!, rss: s.now(), heap: liveHeap() });
        }
        return { lines, bytes, seen };
      };
      const m = await timed(s, () => consume(march));
      line('ours  DATEV month (2026-03)', m);
      // RSS after 100k and 1M rows; a smaller seed (BENCH_INVOICES) samples at a tenth and nine tenths.
      const marks = seeded.total >= 1_000_000 ? [100_000, 1_000_000] : [Math.round(seeded.total / 10), Math.round(seeded.total * 0.9)];
      const y = await timed(s, () => consume(year, [...marks]));
      line('ours  DATEV whole year', y);
      const rssMarks = y.result.seen.map((x) => `${x.rows.toLocaleString('en')} rows: RSS ${mb(x.rss)}, live heap ${mb(x.heap)}`).join('; ');
      ctx.log(`    ${y.result.lines.toLocaleString('en')} booking rows, ${mb(y.result.bytes)}; ${rssMarks}`);
      const yb = await timed(s, () => plainCsvExport(plain, seeded.tenantId, year.start, year.end));
      line('plain cursor CSV, whole year', yb);
      ctx.log(`    ${yb.result.lines.toLocaleString('en')} rows, ${mb(yb.result.bytes)}`);
      rows.push({
        name: 'reports DATEV whole year',
        metric: 'ms',
        ours: y.ms,
        baseline: yb.ms,
        better: 'lower',
        notes: [`${y.result.lines.toLocaleString('en')} rows, peak RSS ${mb(y.peakRss)} (plain ${mb(yb.peakRss)}); ${rssMarks}`],
      });
      if (y.result.seen.length === 2) {
        // Live heap (after a full GC) is what the export holds; RSS also counts what V8 and the
        // allocator have not handed back yet, so it is printed but not judged.
        const [a, z] = y.result.seen;
        rows.push({
          name: `reports DATEV heap growth ${marks.map((x) => x.toLocaleString('en')).join('→')} rows`,
          metric: 'MB',
          ours: (z.heap - a.heap) / 1024 / 1024,
          baseline: null,
          better: 'lower',
          target: { of: 'ours', value: 16, label: '≤ 16 MB (streams)' },
          notes: [`RSS ${mb(a.rss)} → ${mb(z.rss)}`],
        });
      }
    } finally {
      await plain.end();
    }
    return rows;
  },
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.argv.splice(2, process.argv.length, 'reports');
  void import('./run');
}
