import type { Histogram } from 'prom-client';

/** A histogram's observation count and sum for one `outcome` label, read from this process's registry. */
export async function histogramOf(histogram: Histogram<'outcome'>, outcome: string): Promise<{ count: number; sum: number }> {
  const { name, values } = await histogram.get();
  const of = (suffix: string) => values.find((v) => v.metricName === `${name}_${suffix}` && v.labels.outcome === outcome)?.value ?? 0;
  return { count: of('count'), sum: of('sum') };
}
