import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../../helpers/server';
import { createTeam } from '../../helpers/factories';
import { repoRoot } from '../../helpers/processes';
import { db } from '../../../shared/db';
import { addBaseRate } from '../../../shared/commands/baseRates';

const run = promisify(execFile);
const ctx = useTestServer();

/** The operator's script as an operator runs it: a process of its own against DATABASE_URL. */
async function baseRateScript(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'scripts/baseRate.ts'), ...args], {
      cwd: repoRoot,
      env: process.env,
    });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

describe('base rates: operators add them without a release', () => {
  it('npm run base-rate -- add: the API serves the new rate at once; again is unchanged; another value needs --replace', async () => {
    const added = await baseRateScript('add', 'DE', '2099-01-01', '1.11');
    expect(added, added.out).toMatchObject({ code: 0 });
    expect(added.out).toContain('DE 2099-01-01 1.11: added');
    const { viewer } = await createTeam();
    const rates = await ctx.http.get('/api/dunning/base-rates?country=DE', { token: viewer.token });
    expect(rates.body.at(-1)).toEqual({ validFrom: '2099-01-01', rate: '1.11' });

    expect((await baseRateScript('add', 'DE', '2099-01-01', '1.11')).out).toContain('unchanged');
    const clash = await baseRateScript('add', 'DE', '2099-01-01', '1.22');
    expect(clash.code).toBe(1);
    expect(clash.out).toContain('pass --replace');
    expect((await baseRateScript('add', 'DE', '2099-01-01', '1.22', '--replace')).out).toContain('replaced');
    expect((await db()('base_rates').where({ country: 'DE', validFrom: '2099-01-01' }).first()).rate).toBe('1.22');
    const list = await baseRateScript('list', 'DE');
    expect(list.out).toContain('DE 2026-01-01 1.27');
  }, 120_000);

  it('refuses bad input with the field named', async () => {
    await expect(db().transaction((trx) => addBaseRate({ trx }, { country: 'FR', validFrom: '2099-13-01', rate: '1,5' }))).rejects.toMatchObject({
      status: 400,
      details: [{ field: 'country' }, { field: 'validFrom' }, { field: 'rate' }],
    });
    const usage = await baseRateScript('add', 'DE');
    expect(usage.code).toBe(2);
    expect(usage.out).toContain('usage');
  }, 60_000);
});
