import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { chromium, type Browser, type BrowserContext, type Page, type Response } from 'playwright-core';
import type { Job } from 'bullmq';
import { startTestServer } from '../helpers/server';
import { repoRoot } from '../helpers/processes';
import { ALL_QUEUES, QUEUES, getQueue } from '../../shared/queues';
import { startWorkers, type RunningWorkers } from '../../workers/worker';

/**
 * The operator pages in a real browser: Swagger UI at /api/docs and Bull Board at /admin/queues,
 * against a real API server, real Redis and a real worker that fails a job. Screenshots go to
 * test-artifacts/ (gitignored) so a CI run leaves something a person can look at.
 *
 * CI installs Debian's chromium (.ci/run); on a machine without it the suite is skipped, loudly.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = fs.existsSync(CHROMIUM);
if (!hasChromium) console.warn(`[test/browser] SKIPPED: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);

const ARTIFACTS = path.join(repoRoot, 'test-artifacts');
const OPERATOR = { username: 'operator', password: `pw-${randomUUID()}` };
const FAILING_JOB_NAME = 'browser-test-unknown-job';
const TIMEOUT = 30_000;

let server: Awaited<ReturnType<typeof startTestServer>>;
let workers: RunningWorkers;
let browser: Browser;
let failedJob: Job;

async function screenshot(page: Page, name: string, fullPage = true): Promise<string> {
  const file = path.join(ARTIFACTS, name);
  await page.screenshot({ path: file, fullPage });
  return file;
}

function expectPng(file: string) {
  const bytes = fs.readFileSync(file);
  expect(bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
  // A blank page compresses to a few KiB; a rendered board or reference is far larger.
  expect(bytes.length).toBeGreaterThan(10_000);
}

describe.skipIf(!hasChromium)('operator pages in a browser (Swagger UI, Bull Board)', () => {
  beforeAll(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    server = await startTestServer({ BULL_BOARD_USER: OPERATOR.username, BULL_BOARD_PASSWORD: OPERATOR.password });

    // A real failure: the maintenance worker's dispatcher fails a job nobody handles with
    // UnrecoverableError, so it lands in "failed" after one attempt.
    workers = await startWorkers({ queues: [QUEUES.maintenance], schedule: false });
    failedJob = await getQueue(QUEUES.maintenance).add(FAILING_JOB_NAME, { reason: 'browser test' }, { jobId: `browser-test-${randomUUID()}`, attempts: 1 });
    const deadline = Date.now() + TIMEOUT;
    while ((await failedJob.getState()) !== 'failed') {
      if (Date.now() > deadline) throw new Error(`job ${failedJob.id} did not fail in time (state ${await failedJob.getState()})`);
      await new Promise((r) => setTimeout(r, 100));
    }

    // launch() gives Chromium a fresh temporary profile of its own (no --user-data-dir needed).
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      timeout: 60_000,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await workers?.close();
    await server?.close();
  });

  async function newContext(opts: Parameters<Browser['newContext']>[0] = {}): Promise<BrowserContext> {
    const ctx = await browser.newContext({ viewport: { width: 1400, height: 1000 }, ...opts });
    ctx.setDefaultTimeout(TIMEOUT);
    return ctx;
  }

  it('Swagger UI at /api/docs renders the operations from /api/openapi.json', { timeout: 90_000 }, async () => {
    const ctx = await newContext();
    try {
      const page = await ctx.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      const res = await page.goto(`${server.url}/api/docs`, { waitUntil: 'load' });
      expect(res?.status()).toBe(200);
      expect(await page.title()).toBe('Accounting service API');
      // Operations appear once Swagger UI has fetched and rendered the document.
      await page
        .locator('.opblock-summary-path', { hasText: /^\/api\/invoices$/ })
        .first()
        .waitFor();
      await page.locator('.opblock-summary-path', { hasText: '/api/customers/{id}' }).first().waitFor();
      await expect(page.locator('.opblock').count()).resolves.toBeGreaterThan(20);
      await expect(page.locator('.info .title').first().textContent()).resolves.toContain('Accounting');
      // Expanding an operation shows its declared responses.
      await page
        .locator('.opblock-summary-path', { hasText: /^\/api\/invoices\/\{id\}$/ })
        .first()
        .click();
      await page.locator('.opblock.is-open .responses-table').first().waitFor();
      expect(errors).toEqual([]);
      // The viewport only: the whole reference is several screens long.
      expectPng(await screenshot(page, 'api-docs.png', false));
    } finally {
      await ctx.close();
    }
  });

  /**
   * Open a URL that answers 401 and return that response. Chromium either shows the 401 page or,
   * without credentials to offer, abandons the navigation (net::ERR_INVALID_AUTH_CREDENTIALS); the
   * response the server sent is recorded either way.
   */
  async function visitUnauthorized(ctx: BrowserContext, url: string) {
    const page = await ctx.newPage();
    const responses: Response[] = [];
    page.on('response', (r) => {
      if (r.url() === url) responses.push(r);
    });
    try {
      await page.goto(url);
    } catch (err) {
      expect((err as Error).message).toMatch(/ERR_INVALID_AUTH_CREDENTIALS/);
    }
    expect(responses.length).toBeGreaterThan(0);
    const res = responses.at(-1)!;
    expect(await page.getByText('Accounting queues').count()).toBe(0);
    return res;
  }

  it('Bull Board at /admin/queues refuses a browser without operator credentials (401)', async () => {
    const anonymous = await newContext();
    const wrong = await newContext({ httpCredentials: { username: OPERATOR.username, password: 'wrong-password' } });
    try {
      for (const ctx of [anonymous, wrong]) {
        const res = await visitUnauthorized(ctx, `${server.url}/admin/queues`);
        expect(res.status()).toBe(401);
        expect(res.headers()['www-authenticate']).toMatch(/^Basic realm="Bull Board"/);
      }
      // The board's API behind the page is guarded the same way.
      const api = await visitUnauthorized(anonymous, `${server.url}/admin/queues/api/queues`);
      expect(api.status()).toBe(401);
    } finally {
      await anonymous.close();
      await wrong.close();
    }
  });

  it('signed in, Bull Board lists every queue, shows the failed job with its reason and retries it', { timeout: 90_000 }, async () => {
    const ctx = await newContext({ httpCredentials: OPERATOR });
    try {
      const page = await ctx.newPage();
      const res = await page.goto(`${server.url}/admin/queues`);
      expect(res?.status()).toBe(200);
      await page.getByText('Accounting queues').first().waitFor();
      for (const queue of ALL_QUEUES) await page.getByRole('link', { name: queue, exact: true }).first().waitFor();
      // The overview cards load after the menu: one card per queue with its job count.
      await expect.poll(() => page.getByText(/^\d+ Jobs?$/).count(), { timeout: TIMEOUT, message: 'one overview card per queue' }).toBe(ALL_QUEUES.length);
      expectPng(await screenshot(page, 'bull-board-overview.png'));

      await page.goto(`${server.url}/admin/queues/queue/${QUEUES.maintenance}?status=failed`);
      await page.getByText(FAILING_JOB_NAME).first().waitFor();
      await page.getByText(String(failedJob.id)).first().waitFor();
      await page.getByText(`No handler for job "${FAILING_JOB_NAME}"`).first().waitFor();
      // What an operator does next (docs/operations.md): retry or clean failed jobs.
      await page
        .getByRole('button', { name: /retry all/i })
        .first()
        .waitFor();
      await page
        .getByRole('button', { name: /clean all/i })
        .first()
        .waitFor();
      expectPng(await screenshot(page, 'bull-board-failed-job.png'));

      // Retry it. The worker stops first: it would fail the job again at once, and "waiting"
      // is then the one state that proves the click reached BullMQ.
      await workers.close();
      // The job card's actions are icon-only buttons without an accessible name; the retry one
      // carries the refresh icon ("Retry all" above the list has it too, with its label).
      await page
        .locator('button:has(svg.lucide-refresh-cw)')
        .filter({ hasNotText: /retry all/i })
        .first()
        .click();
      // Bull Board asks before a job action; the question names the action we meant.
      const dialog = page.getByRole('dialog').or(page.getByRole('alertdialog')).first();
      await expect(dialog.textContent()).resolves.toMatch(/retry this job/i);
      await dialog.getByRole('button', { name: 'Confirm', exact: true }).click();
      await expect.poll(() => failedJob.getState(), { timeout: TIMEOUT, message: 'the retried job leaves the failed state' }).toBe('waiting');
      expect(await getQueue(QUEUES.maintenance).getFailedCount()).toBe(0);
    } finally {
      await ctx.close();
    }
  });
});
