import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/bench/**', 'node_modules/**'],
    setupFiles: ['test/helpers/setupFile.ts'],
    pool: 'forks',
    maxWorkers: 3,
    // Generous bounds for a loaded 2-core CI machine; tests assert outcomes, never timings.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/helpers/summaryReporter.ts'],
  },
});
