/**
 * The BWA (betriebswirtschaftliche Auswertung) as the service returns it: net amounts as decimal
 * strings, per month and cumulated, with the prior year side by side. Pure types: the query
 * (shared/queries/reports/bwa.ts) fills them, the PDF (shared/formats/reportPdf/bwaPdf.ts)
 * renders them.
 */
export interface BwaLine {
  current: string;
  prior: string;
  change: string;
  /** (current − prior) / |prior| × 100, one decimal place; null when the prior value is 0. */
  changePercent: string | null;
}

export interface BwaBlock {
  revenue: BwaLine;
  costOfGoods: BwaLine;
  grossProfit: BwaLine;
  /** group = "<account> <name>" (name when known); account = the account number. */
  expenses: Array<{ group: string; account: string; name: string | null } & BwaLine>;
  totalExpenses: BwaLine;
  result: BwaLine;
}

export interface BwaReport {
  year: number;
  priorYear: number;
  currency: 'EUR';
  chart: string;
  months: Array<{ month: number } & BwaBlock & { cumulative: BwaBlock }>;
  total: BwaBlock;
}
