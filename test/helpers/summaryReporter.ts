import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints one plain closing line, "tests: N passed, N failed, N skipped", after vitest's own
 * summary, so CI logs state the count in a form any reader (human or tool) can pick up.
 * Before it, one line per test file that skipped tests for missing official files
 * (test/helpers/officialFiles.ts).
 */
export default class SummaryReporter implements Reporter {
  onTestModuleEnd(m: TestModule) {
    const missing = m.meta().officialFilesMissing;
    if (!missing) return;
    const skipped = [...m.children.allTests()].filter((t) => t.result().state === 'skipped').length;
    process.stdout.write(`skipped ${m.relativeModuleId} (${skipped} test${skipped === 1 ? '' : 's'}): ${missing}\n`);
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>) {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const m of testModules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      if (m.state() === 'failed' && ![...m.children.allTests()].length) failed++;
    }
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
