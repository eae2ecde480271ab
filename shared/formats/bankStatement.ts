import { InboundRefusal } from './inbound/xmlTree';
import { readCamt053 } from './camt/readCamt053';
import { looksLikeMt940, readMt940 } from './mt940/readMt940';
import type { ReadStatementResult } from '../domain/bankStatements';

/** The formats an uploaded bank statement may be in; the bytes decide (docs/bank-statements.md). */
export function sniffBankStatement(bytes: Buffer): 'camt' | 'mt940' | null {
  const head = bytes.subarray(0, 1024).toString('latin1');
  if (/^(\uFEFF|\xEF\xBB\xBF)?\s*</.test(head)) return 'camt';
  if (looksLikeMt940(bytes)) return 'mt940';
  return null;
}

/** Reads a camt.053 or MT940 statement; never throws on its content (a refusal names the cause). */
export function readBankStatement(bytes: Buffer): ReadStatementResult {
  try {
    const kind = sniffBankStatement(bytes);
    if (kind === null) return { ok: false, reason: 'the file is neither a camt.053 XML statement nor an MT940 statement' };
    return { ok: true, statement: kind === 'camt' ? readCamt053(bytes) : readMt940(bytes) };
  } catch (e) {
    if (e instanceof InboundRefusal) return { ok: false, reason: e.message };
    // Anything else is a parser tripping over hostile input (deep nesting and the like).
    return { ok: false, reason: `the statement cannot be read (${e instanceof Error ? e.message.slice(0, 120) : 'unknown error'})` };
  }
}
