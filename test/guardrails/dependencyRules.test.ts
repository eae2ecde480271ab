import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The layering rules (.dependency-cruiser.cjs, docs/layering.md) bite: the installed depcruise
 * binary, run with the repository's config, reports a forbidden import by its rule's name and exits
 * non-zero. The forbidden imports are written into a scratch tree with the repository's layout in a
 * temporary directory, so the work tree is never touched (a parallel `npm run deps` never sees
 * them); the last test cruises the repository itself, like `npm run deps`.
 */
const root = path.resolve(import.meta.dirname, '../..');
const bin = path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const configFile = path.join(root, '.dependency-cruiser.cjs');

interface Violation {
  severity: string;
  rule: string;
  from: string;
  /** Empty for a cycle (its modules follow on the next lines). */
  to: string;
}

/** One line of the default `err` report: "  error domain-no-io: shared/domain/x.ts → shared/db.ts". */
const VIOLATION_LINE = /^\s*(error|warn|info) ([\w-]+): (\S+) →\s*(\S*)$/;

/** Runs depcruise as `npm run deps` does (same binary, config and report); exit code = number of errors. */
async function depcruise(cwd: string, targets: string[]): Promise<{ exitCode: number; output: string; violations: Violation[] }> {
  let exitCode = 0;
  let output: string;
  try {
    ({ stdout: output } = await promisify(execFile)(process.execPath, [bin, ...targets, '--config', configFile], {
      cwd,
      env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
      maxBuffer: 16 * 1024 * 1024,
    }));
  } catch (err) {
    const e = err as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number' || !e.stdout) throw new Error(`depcruise did not run: ${e.stderr ?? String(err)}`);
    exitCode = e.code;
    output = e.stdout;
  }
  const violations = output
    .split('\n')
    .map((line) => VIOLATION_LINE.exec(line))
    .filter((m) => m !== null)
    .map(([, severity, rule, from, to]) => ({ severity, rule, from, to }));
  return { exitCode, output, violations };
}

let scratch: string;

function write(rel: string, text: string): void {
  const file = path.join(scratch, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'layering-'));
  write('shared/db.ts', 'export const db = () => null;\n');
  write('shared/errors.ts', "export const oops = () => new Error('oops');\n");
  write('shared/domain/money.ts', "import { oops } from '../errors';\nexport const round = (n: number) => (Number.isFinite(n) ? Math.round(n) : oops());\n");
  write('workers/jobs/send.ts', 'export const send = () => 1;\n');
  // A stand-in for the knex package: the rules match packages by their path under node_modules/.
  write('node_modules/knex/package.json', '{ "name": "knex", "version": "3.0.0", "main": "index.js" }\n');
  write('node_modules/knex/index.js', 'module.exports = {};\n');
});

afterAll(() => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

describe('dependency rules', () => {
  it('shared/domain importing shared/db is domain-no-io', async () => {
    write('shared/domain/probe.ts', "import { db } from '../db';\nexport const probe = db;\n");
    const { exitCode, violations } = await depcruise(scratch, ['shared']);
    expect(exitCode).toBeGreaterThan(0);
    expect(violations).toContainEqual({ severity: 'error', rule: 'domain-no-io', from: 'shared/domain/probe.ts', to: 'shared/db.ts' });
    // The allowed import next to it (domain → shared/errors.ts) is not reported.
    expect(violations.filter((v) => v.from === 'shared/domain/money.ts')).toEqual([]);
  });

  it('a type-only import and an I/O package count too', async () => {
    write('shared/domain/typeProbe.ts', "import type { db } from '../db';\nexport type Probe = typeof db;\n");
    write('shared/domain/packageProbe.ts', "import knex from 'knex';\nimport { readFileSync } from 'node:fs';\nexport const probe = [knex, readFileSync];\n");
    const { violations } = await depcruise(scratch, ['shared']);
    const byDomain = violations.filter((v) => v.rule === 'domain-no-io').map((v) => `${v.from} → ${v.to}`);
    expect(byDomain).toEqual(
      expect.arrayContaining([
        'shared/domain/typeProbe.ts → shared/db.ts',
        'shared/domain/packageProbe.ts → node_modules/knex/index.js',
        'shared/domain/packageProbe.ts → fs',
      ]),
    );
  });

  it('api importing workers is api-not-workers', async () => {
    write('api/routes/probe.ts', "import { send } from '../../workers/jobs/send';\nexport const probe = send;\n");
    const { exitCode, violations } = await depcruise(scratch, ['api', 'workers']);
    expect(exitCode).toBeGreaterThan(0);
    expect(violations).toContainEqual({ severity: 'error', rule: 'api-not-workers', from: 'api/routes/probe.ts', to: 'workers/jobs/send.ts' });
  });

  it('a cycle is no-circular', async () => {
    write('shared/cycleA.ts', "import { b } from './cycleB';\nexport const a = () => b();\n");
    write('shared/cycleB.ts', "import { a } from './cycleA';\nexport const b = () => a;\n");
    const { exitCode, output, violations } = await depcruise(scratch, ['shared']);
    expect(exitCode).toBeGreaterThan(0);
    const cycles = violations.filter((v) => v.rule === 'no-circular');
    expect(cycles).toHaveLength(1);
    expect(['shared/cycleA.ts', 'shared/cycleB.ts']).toContain(cycles[0].from);
    expect(output).toMatch(/no-circular: shared\/cycle[AB]\.ts → \s+shared\/cycle[AB]\.ts →\s+shared\/cycle[AB]\.ts/);
  });

  it('the repository itself has no violations (npm run deps)', async () => {
    const { exitCode, output, violations } = await depcruise(root, ['api', 'workers', 'shared', 'migrations', 'scripts']);
    expect(violations).toEqual([]);
    expect(exitCode).toBe(0);
    expect(output).toContain('no dependency violations found');
  });
});
