/** Request bodies shared by the benchmarks. */

/** Ten invoice items as the API takes them (two tax rates, mixed quantities). */
export function tenItems() {
  return Array.from({ length: 10 }, (_, i) => ({
    description: `Position ${i + 1}: Wartung Modul ${String.fromCharCode(65 + i)}`,
    quantity: (i % 4) + 1,
    unit: 'h',
    unitPrice: `${(i % 7) * 10 + 15}.25`,
    taxRate: i % 3 === 0 ? '10' : '20',
  }));
}
