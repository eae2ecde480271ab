/**
 * Profile helper (on demand, not part of npm run bench): CPU per document of the invoice PDF and
 * ZUGFeRD (10 items) beside the pdfkit baseline page, in this process, measured with
 * process.cpuUsage() (user + system) so a loaded machine changes the figures less than wall time.
 * Rounds alternate ours and the baseline; the median round is printed.
 *   node --import tsx test/bench/profileRender.ts [n per round] [rounds]
 *   node --cpu-prof --import tsx test/bench/profileRender.ts   # and open the .cpuprofile
 * RENDER_BEFORE=<dir> adds an older version's renderer to the same rounds ("pdf before",
 * "zugferd before"): a directory holding that commit's shared/ and test/, e.g.
 *   git archive <commit> shared test package.json tsconfig.json | tar -x -C /tmp/before && ln -s "$PWD/node_modules" /tmp/before/
 */
import { renderDocument } from '../../shared/documents/renderDocument';
import { makeDocumentInput, manyItems } from '../formats/pdf/fixtures';
import { pdfkitInvoice, type Row } from './lib/pdfkitPage';

const n = Number(process.argv[2] ?? 40);
const rounds = Number(process.argv[3] ?? 5);
const base = makeDocumentInput({ items: manyItems(10) });
const input = {
  ...base,
  seller: { ...base.seller, contactName: 'Max Muster', contactPhone: '+43 1 234 56 78', contactEmail: 'max@mueller-soehne.at' },
  invoice: { ...base.invoice, buyerReference: 'KST-4711', orderReference: 'PO-12' },
};
const rows = input.invoice.items as unknown as Row[];

async function cpuMsPer(fn: () => Promise<unknown>): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) await fn();
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000 / n;
}

const before: typeof renderDocument | null = process.env.RENDER_BEFORE
  ? (await import(`${process.env.RENDER_BEFORE}/shared/documents/renderDocument.ts`)).renderDocument
  : null;
const kinds: Record<string, () => Promise<unknown>> = {
  ...(before ? { 'pdf before': () => before('pdf', input), 'zugferd before': () => before('zugferd', input) } : {}),
  pdf: () => renderDocument('pdf', input),
  zugferd: () => renderDocument('zugferd', input),
  'pdfkit page': () => pdfkitInvoice(rows),
};
for (const fn of Object.values(kinds)) for (let i = 0; i < 5; i++) await fn(); // warm-up
const samples: Record<string, number[]> = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]));
for (let r = 0; r < rounds; r++) for (const [k, fn] of Object.entries(kinds)) samples[k].push(await cpuMsPer(fn));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const page = median(samples['pdfkit page']);
for (const [k, xs] of Object.entries(samples)) {
  const m = median(xs);
  console.log(
    `${k.padEnd(14)} ${m.toFixed(2)} ms CPU per document (rounds ${xs.map((x) => x.toFixed(1)).join(' ')}), ${(page / m).toFixed(2)} × the pdfkit page`,
  );
}
