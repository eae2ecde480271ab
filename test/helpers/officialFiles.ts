import { existsSync } from 'node:fs';
import path from 'node:path';
import { TestRunner } from 'vitest';

/**
 * The official files some tests read (XSDs and samples of the e-invoice and tax formats, the
 * providers' published webhook payloads). They are not in this repository: they are read from
 *   SCHEMAS_DIR   (default ../shared/schemas beside the repository, when that folder exists)
 *   SAMPLES_DIR   (default ../shared/samples)
 *   FIXTURES_DIR  (default ../shared/fixtures)
 * See docs/official-files.md for what they are and where to get them.
 *
 * A test file declares what it needs and skips those tests when it is missing:
 *
 *   const official = needsOfficialFiles(['schemas:u30-finanzonline/BMF_ERKLAERUNGS_UEBERMITTLUNG_U30_07_2026.xsd']);
 *   it.skipIf(!official)('valid against the XSD', () => { … schemaPath('u30-finanzonline/…') … });
 *
 * The summary reporter then prints one line for the file ("skipped <file> (N tests): needs …").
 * With REQUIRE_OFFICIAL_FILES=1 (CI) a missing file fails the test file instead.
 */

const KINDS = {
  schemas: { env: 'SCHEMAS_DIR', what: 'the official schemas' },
  samples: { env: 'SAMPLES_DIR', what: 'the official samples' },
  fixtures: { env: 'FIXTURES_DIR', what: 'the official provider fixtures' },
} as const;
type Kind = keyof typeof KINDS;
/** `<kind>:<path inside that folder>`, e.g. 'schemas:ebinterface-6.1/Invoice.xsd'. */
export type OfficialFile = `${Kind}:${string}`;

const besideRepo = path.resolve(import.meta.dirname, '../../../shared');

function dirOf(kind: Kind): string | null {
  const fromEnv = process.env[KINDS[kind].env];
  if (fromEnv) return path.resolve(fromEnv);
  const dir = path.join(besideRepo, kind);
  return existsSync(dir) ? dir : null;
}

export const SCHEMAS_DIR = dirOf('schemas');
export const SAMPLES_DIR = dirOf('samples');
export const FIXTURES_DIR = dirOf('fixtures');

const DIRS: Record<Kind, string | null> = { schemas: SCHEMAS_DIR, samples: SAMPLES_DIR, fixtures: FIXTURES_DIR };

/** Absolute path of an official file (a path that does not exist when its folder is not configured). */
export function officialPath(file: OfficialFile): string {
  const [kind, rel] = split(file);
  return path.join(DIRS[kind] ?? `<${KINDS[kind].env} not set>`, rel);
}
export const schemaPath = (rel: string) => officialPath(`schemas:${rel}`);
export const fixturePath = (rel: string) => officialPath(`fixtures:${rel}`);

function split(file: OfficialFile): [Kind, string] {
  const i = file.indexOf(':');
  const kind = file.slice(0, i) as Kind;
  if (!(kind in KINDS)) throw new Error(`official file "${file}": the prefix must be schemas:, samples: or fixtures:`);
  return [kind, file.slice(i + 1)];
}

declare module 'vitest' {
  interface TaskMeta {
    /** Set by needsOfficialFiles when files are missing; printed by the summary reporter. */
    officialFilesMissing?: string;
  }
}

/**
 * Whether all the given official files are there. Call it once at the top of a test file and
 * skip with it (`it.skipIf(!official)`, `describe.skipIf(!official)`) only the tests that read
 * them. Missing files: the file is marked for the one skip line, or, with
 * REQUIRE_OFFICIAL_FILES=1, this throws and the test file fails.
 */
export function needsOfficialFiles(files: OfficialFile[]): boolean {
  const missing = files.filter((f) => !existsSync(officialPath(f)));
  if (missing.length === 0) return true;
  const [first] = missing.map(split);
  const needs = `${KINDS[first[0]].env}/${first[1]}${missing.length > 1 ? ` and ${missing.length - 1} more` : ''}`;
  const kinds = [...new Set(missing.map((f) => split(f)[0]))];
  const hint = `set ${kinds.map((k) => `${KINDS[k].env} to ${KINDS[k].what}`).join(', ')} (docs/official-files.md)`;
  const testFile = TestRunner.getCurrentSuite().file;
  if (process.env.REQUIRE_OFFICIAL_FILES === '1') {
    const paths = missing.map(officialPath).join(', ');
    throw new Error(`REQUIRE_OFFICIAL_FILES=1 and ${testFile?.name ?? 'this test file'} needs ${needs} (missing: ${paths}); ${hint}`);
  }
  if (testFile) testFile.meta.officialFilesMissing = `needs ${needs} — ${hint}`;
  return false;
}
