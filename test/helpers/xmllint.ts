/**
 * XSD validation for tests via libxml2's xmllint (offline: --nonet, so a schema that tries to
 * fetch anything over the network fails instead of hanging).
 *
 *   const { valid, errors } = validateXml(xml, schemaPath('ebinterface-6.1/Invoice.xsd')); // ./officialFiles
 *   expect(valid, errors).toBe(true);
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface XmlValidationResult {
  valid: boolean;
  /** xmllint's diagnostics (empty when valid); the temp file name is replaced by "document.xml". */
  errors: string;
}

export function validateXml(xml: string | Buffer, xsdPath: string): XmlValidationResult {
  const dir = mkdtempSync(join(tmpdir(), 'xmllint-'));
  const file = join(dir, 'document.xml');
  try {
    writeFileSync(file, xml);
    const res = spawnSync('xmllint', ['--noout', '--nonet', '--schema', xsdPath, file], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (res.error) throw new Error(`xmllint could not be run: ${res.error.message}`);
    const output = `${res.stderr ?? ''}${res.stdout ?? ''}`.split(file).join('document.xml');
    const valid = res.status === 0;
    return { valid, errors: valid ? '' : output.trim() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
