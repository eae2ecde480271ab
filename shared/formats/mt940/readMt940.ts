import iconv from 'iconv-lite';
import { refuse } from '../inbound/xmlTree';
import { germanIbanOf, type ParsedStatement, type StatementEntry } from '../../domain/bankStatements';
import { isValidIban, normalizeIban } from '../../domain/iban';

/**
 * MT940 (SWIFT customer statement) reader, with the German banks' :86: as the Deutsche
 * Kreditwirtschaft specifies it (DFÜ-Abkommen Anlage 3 "Datenformate", MT940 Kapitel): a 3-digit
 * GVC (Geschäftsvorfallcode), a separator (normally '?') and numbered subfields ?00 booking text,
 * ?20–?29 and ?60–?63 remittance (SEPA: EREF+, KREF+, MREF+, CRED+, SVWZ+, ABWA+ inside it),
 * ?30 BIC/BLZ, ?31 IBAN/account, ?32–?33 name of the other party. An :86: without a GVC is read as
 * free text. Lines are joined without a separator: both the 65-character MT940 lines and the
 * 27-character ?2x subfields cut through words and references.
 */
export const MAX_MT940_BYTES = 20 * 1024 * 1024;
const MAX_LINES = 2_000_000;

/** Whether the bytes look like an MT940 file (a :20: near the start, perhaps after SWIFT header blocks). */
export function looksLikeMt940(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 2048).toString('latin1');
  return /^(?:\s|\{[^}]*\}|-)*:20:/.test(head) || /(^|\r?\n):20:/.test(head);
}

function decode(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    // German banks write MT940 in ISO-8859-1 / windows-1252 more often than not.
    return iconv.decode(bytes, 'windows-1252');
  }
}

interface Field {
  tag: string;
  value: string;
}

function fields(text: string): Field[] {
  const lines = text.split(/\r\n|\n|\r/);
  if (lines.length > MAX_LINES) refuse(`the MT940 file has more than ${MAX_LINES} lines`);
  const out: Field[] = [];
  for (const line of lines) {
    const m = /^:(\d{2}[A-Z]?):(.*)$/.exec(line);
    if (m) out.push({ tag: m[1], value: m[2] });
    else if (line === '-' || line === '' || /^\{.*\}?$/.test(line) || line.startsWith('{')) continue;
    else if (out.length) out[out.length - 1].value += `\n${line}`;
  }
  return out;
}

const amountOf = (s: string, what: string): string => {
  const m = /^(\d{1,15}),(\d{0,2})$/.exec(s);
  if (!m) return refuse(`${what}: ${JSON.stringify(s.slice(0, 30))} is not an amount`);
  return `${BigInt(m[1])}.${m[2].padEnd(2, '0')}`;
};

function yymmdd(s: string, what: string): string {
  const yy = Number(s.slice(0, 2));
  // SWIFT's two-digit years: 00–79 are 2000–2079, as every bank's software reads them.
  const iso = `${yy < 80 ? 2000 + yy : 1900 + yy}-${s.slice(2, 4)}-${s.slice(4, 6)}`;
  const d = new Date(`${iso}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== iso) refuse(`${what}: ${s} is not a date`);
  return iso;
}

/** The booking date MMDD of :61:, in the value date's year or the one next to it (statements across New Year). */
function bookingDateOf(valueDate: string, mmdd: string, what: string): string {
  const year = Number(valueDate.slice(0, 4));
  const options = [year - 1, year, year + 1].map((y) => `${y}-${mmdd.slice(0, 2)}-${mmdd.slice(2, 4)}`);
  const valid = options.filter((iso) => {
    const d = new Date(`${iso}T00:00:00Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === iso;
  });
  if (!valid.length) refuse(`${what}: booking date ${mmdd} is not a date`);
  const dist = (iso: string) => Math.abs(Date.parse(iso) - Date.parse(valueDate));
  return valid.sort((a, b) => dist(a) - dist(b))[0];
}

// :61: value date, [booking date], [R]C|D, [funds code], amount, N|F + type code, customer reference [//bank reference] [\n details]
const LINE_61 = /^(\d{6})(\d{4})?(RC|RD|C|D)([A-Z])?(\d{1,15},\d{0,2})([NFS][A-Z0-9]{3})([^\n]*?)(?:\/\/([^\n]*))?(?:\n([\s\S]*))?$/;

export function readMt940(bytes: Buffer): ParsedStatement {
  if (bytes.length > MAX_MT940_BYTES) refuse(`the MT940 file is larger than ${MAX_MT940_BYTES / 1024 / 1024} MB`);
  const all = fields(decode(bytes));
  if (!all.some((f) => f.tag === '20')) refuse('not an MT940 statement: no :20: field');
  const acctField = all.find((f) => f.tag === '25') ?? refuse('MT940 without an account (:25:)');
  const accountRaw = acctField.value.trim();
  const accounts = new Set(all.filter((f) => f.tag === '25').map((f) => f.value.trim()));
  if (accounts.size > 1) refuse(`the file holds statements of several accounts (${[...accounts].slice(0, 3).join(', ')}); upload one file per account`);
  const compact = normalizeIban(accountRaw);
  let accountIban: string | null = null;
  if (/^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(compact) && isValidIban(compact)) accountIban = compact;
  else {
    const m = /^(\d{8})\/(\d{1,10})(?:[A-Z]{3})?$/.exec(accountRaw);
    if (m) accountIban = germanIbanOf(m[1], m[2]);
  }
  const opening = all.find((f) => f.tag === '60F' || f.tag === '60M');
  const currency = opening ? (/^[CD]\d{6}([A-Z]{3})/.exec(opening.value)?.[1] ?? null) : null;

  const entries: StatementEntry[] = [];
  const warnings: string[] = [];
  for (let i = 0; i < all.length; i++) {
    const f = all[i];
    if (f.tag !== '61') continue;
    const where = `entry ${entries.length + 1}`;
    const m = LINE_61.exec(f.value);
    if (!m) refuse(`${where}: the :61: line is not in the MT940 format: ${JSON.stringify(f.value.slice(0, 60))}`);
    const [, vd, bd, mark, , amt, , custRef, bankRef] = m!;
    const valueDate = yymmdd(vd, where);
    const info = all[i + 1]?.tag === '86' ? all[i + 1].value : '';
    const details = readField86(info);
    const ref = (v: string | undefined) => {
      const t = (v ?? '').trim();
      return t && t.toUpperCase() !== 'NONREF' ? t.slice(0, 35) : null;
    };
    entries.push({
      entryReference: ref(bankRef),
      bookingDate: bd ? bookingDateOf(valueDate, bd, where) : valueDate,
      valueDate,
      amount: amountOf(amt, where),
      direction: mark.endsWith('C') ? 'credit' : 'debit',
      currency: currency ?? refuse('MT940 without an opening balance (:60F:) naming the currency'),
      reversal: mark.startsWith('R'),
      counterpartyName: details.name,
      counterpartyIban: details.iban,
      remittance: details.remittance,
      creditorReference: null,
      endToEndId: details.endToEnd ?? ref(custRef),
      bankText: details.bankText,
    });
  }
  if (!opening) warnings.push('no opening balance (:60F:)');
  return {
    format: 'mt940',
    statementId:
      all
        .find((f) => f.tag === '20')
        ?.value.trim()
        .slice(0, 35) ?? null,
    accountIban,
    account: accountIban ?? accountRaw.slice(0, 70),
    currency,
    entries,
    warnings,
  };
}

interface Field86 {
  name: string | null;
  iban: string | null;
  remittance: string | null;
  endToEnd: string | null;
  bankText: string | null;
}

const SEPA_KEYS = ['EREF', 'KREF', 'MREF', 'CRED', 'DEBT', 'COAM', 'OAMT', 'SVWZ', 'ABWA', 'ABWE', 'IBAN', 'BIC'];

/** :86: structured (GVC + subfields) or free text (docs/bank-statements.md, "MT940"). */
export function readField86(value: string): Field86 {
  const joined = value.replace(/\n/g, '');
  const structured = /^(\d{3})(\D)/.exec(joined);
  if (!structured || (!joined.includes(`${structured[2]}20`) && !joined.includes(`${structured[2]}00`))) {
    const free = joined.trim();
    return { name: null, iban: null, remittance: free ? free.slice(0, 2000) : null, endToEnd: null, bankText: null };
  }
  const [, gvc, sep] = structured;
  const sub = new Map<number, string>();
  for (const part of joined.slice(4).split(sep)) {
    const m = /^(\d{2})([\s\S]*)$/.exec(part);
    if (!m) continue;
    const n = Number(m[1]);
    sub.set(n, (sub.get(n) ?? '') + m[2]);
  }
  const purpose = [...Array.from({ length: 10 }, (_, k) => 20 + k), 60, 61, 62, 63].map((n) => sub.get(n) ?? '').join('');
  // SEPA: the purpose lines carry "EREF+…", "SVWZ+…" keys; the remittance proper is SVWZ+.
  const keyed = new Map<string, string>();
  const keyRe = new RegExp(`(${SEPA_KEYS.join('|')})\\+`, 'g');
  const hits = [...purpose.matchAll(keyRe)].filter((h) => h.index === 0 || /[^A-Z]/.test(purpose[h.index! - 1] ?? ' '));
  hits.forEach((h, k) => {
    const start = h.index! + h[0].length;
    const end = k + 1 < hits.length ? hits[k + 1].index! : purpose.length;
    keyed.set(h[1], purpose.slice(start, end).trim());
  });
  const name = [sub.get(32), sub.get(33)].filter(Boolean).join('').trim();
  const account = (sub.get(31) ?? '').trim();
  const iban = normalizeIban(account);
  const eref = keyed.get('EREF');
  const remittance = hits.length ? (keyed.get('SVWZ') ?? purpose).trim() : purpose.trim();
  return {
    name: name ? name.slice(0, 140) : null,
    iban: /^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(iban) ? iban : null,
    remittance: remittance ? remittance.slice(0, 2000) : null,
    endToEnd: eref && eref !== 'NOTPROVIDED' ? eref.slice(0, 35) : null,
    bankText: `${gvc} ${(sub.get(0) ?? '').trim()}`.trim().slice(0, 500),
  };
}
