import { createHash } from 'node:crypto';
import { compactReference, creditorReferenceFor, findCreditorReferences } from './creditorReference';
import { dec, fmtMoney } from './money';
import { normalizeIban } from './iban';

/**
 * Bank statements (docs/bank-statements.md): what the camt.053 and MT940 readers produce, the key
 * that stores each booked entry once, and the rule that matches an entry to an open invoice. Pure.
 */

export type Direction = 'credit' | 'debit';

/** One booked entry of a statement, as the bank reported it. Amounts are positive decimal strings. */
export interface StatementEntry {
  /** The bank's own reference of the entry (camt AcctSvcrRef, else NtryRef; MT940 :61: bank reference). */
  entryReference: string | null;
  bookingDate: string;
  valueDate: string | null;
  amount: string;
  direction: Direction;
  currency: string;
  /** A reversal (storno) of an earlier entry (camt RvslInd, MT940 RC/RD). */
  reversal: boolean;
  /** The other party: the payer of a credit, the payee of a debit. */
  counterpartyName: string | null;
  counterpartyIban: string | null;
  /** Unstructured remittance information (camt Ustrd, MT940 :86: ?20–?29/SVWZ+ or its free text). */
  remittance: string | null;
  /** A structured creditor reference (camt Strd/CdtrRefInf/Ref), e.g. an RF reference. */
  creditorReference: string | null;
  /** The payer's end-to-end id (camt EndToEndId, MT940 EREF+), or the MT940 customer reference. */
  endToEndId: string | null;
  /** What the bank calls the kind of booking (camt BkTxCd/Prtry or AddtlNtryInf, MT940 GVC and ?00). */
  bankText: string | null;
}

export interface ParsedStatement {
  format: string;
  /** The statement's own id (camt Stmt/Id, MT940 :20:). */
  statementId: string | null;
  /** The account's IBAN (camt Acct/Id/IBAN; MT940 :25:, a German BLZ/account converted). */
  accountIban: string | null;
  /** The account as written, when it is not an IBAN (camt Othr/Id, MT940 :25:). */
  account: string;
  currency: string | null;
  entries: StatementEntry[];
  /** Entries left out (not booked: pending, information) and other notes. */
  warnings: string[];
}

export type ReadStatementResult = { ok: true; statement: ParsedStatement } | { ok: false; reason: string };

/**
 * The key that stores an entry once per tenant, across overlapping statements: the bank's entry
 * reference with the account, else account + booking date + direction + amount + the references
 * and remittance text (hashed). Entries that agree in all of that within one statement (two
 * equal transfers on one day) are told apart by their ordinal among those equals; an overlapping
 * statement lists the same day's entries in the same order and gives them the same ordinals.
 */
export function dedupKeys(account: string, entries: readonly StatementEntry[]): string[] {
  const seen = new Map<string, number>();
  return entries.map((e) => {
    let base: string;
    if (e.entryReference) base = `ref|${account}|${e.entryReference}`;
    else {
      const text = [e.endToEndId, e.creditorReference, e.remittance, e.counterpartyIban].map((v) => v ?? '').join('|');
      const hash = createHash('sha256').update(text).digest('hex').slice(0, 32);
      base = `key|${account}|${e.bookingDate}|${e.direction}|${e.reversal ? 'R' : ''}${e.amount}|${hash}`;
    }
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return n === 1 ? base : `${base}#${n}`;
  });
}

// ——— matching ———

/** An open invoice the matching may pay: a sales invoice for a credit, an incoming one for a debit. */
export interface MatchCandidate {
  invoiceId: string;
  /** Our number of a sales invoice; the supplier's number of an incoming one. */
  number: string | null;
  currency: string;
  amountDue: string;
  /** Customer or supplier names (name, company) as the invoice knows them. */
  partyNames: string[];
  /** IBANs known for the party: the supplier's, or those that paid this customer's invoices before. */
  partyIbans: string[];
}

export interface MatchableEntry {
  direction: Direction;
  amount: string;
  currency: string;
  counterpartyName: string | null;
  counterpartyIban: string | null;
  remittance: string | null;
  creditorReference: string | null;
  endToEndId: string | null;
}

export type MatchRule = 'reference' | 'number' | 'amountAndPayer' | 'manual';

export type MatchDecision = { kind: 'match'; invoiceId: string; amount: string; rule: MatchRule; overpaid: string | null } | { kind: 'none'; reason: string };

/** Names compared without case, accents, punctuation and legal-form noise ("Muster GmbH" = "MUSTER GMBH."). */
export function normalizeName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/** Whether `number` occurs in `text` as a whole token (not inside a longer number or word). */
function mentions(text: string, number: string): boolean {
  const n = number.toUpperCase();
  if (n.replace(/[^A-Z0-9]/g, '').length < 3) return false;
  let from = 0;
  for (;;) {
    const at = text.indexOf(n, from);
    if (at < 0) return false;
    const before = at === 0 ? '' : text[at - 1];
    const after = text[at + n.length] ?? '';
    if (!/[A-Z0-9]/.test(before) && !/[A-Z0-9]/.test(after)) return true;
    from = at + 1;
  }
}

/**
 * The invoice an entry pays, in this order (docs/bank-statements.md, "Matching"):
 * 1. an RF reference (structured, or found in the remittance text) that is an open invoice's;
 * 2. an open invoice's number in the remittance, end-to-end id or creditor reference;
 * 3. else the exact amount due from the party (its name or a known IBAN), when exactly one
 *    invoice fits.
 * Rules 1 and 2 must name exactly one invoice (a transfer naming two is left for a person). A
 * referenced invoice is paid at most its amount due: the rest is reported as overpaid and stays
 * on the entry. Other currencies than the invoice's are never matched.
 */
export function decideMatch(entry: MatchableEntry, candidates: readonly MatchCandidate[]): MatchDecision {
  const open = candidates.filter((c) => c.currency === entry.currency && dec(c.amountDue).gt(0));
  if (open.length === 0) return { kind: 'none', reason: 'no open invoice in this currency' };
  const amount = dec(entry.amount);
  const pay = (c: MatchCandidate, rule: MatchRule): MatchDecision => {
    const due = dec(c.amountDue);
    return amount.gt(due)
      ? { kind: 'match', invoiceId: c.invoiceId, amount: fmtMoney(due), rule, overpaid: fmtMoney(amount.minus(due)) }
      : { kind: 'match', invoiceId: c.invoiceId, amount: fmtMoney(amount), rule, overpaid: null };
  };
  const texts = [entry.remittance, entry.creditorReference, entry.endToEndId].filter((t): t is string => !!t).map((t) => t.toUpperCase());
  const all = texts.join(' \n ');

  // 1. RF references.
  const refs = new Set([...(entry.creditorReference ? findCreditorReferences(entry.creditorReference) : []), ...findCreditorReferences(all)]);
  if (refs.size) {
    const hits = open.filter((c) => c.number && refs.has(creditorReferenceFor(c.number) ?? ''));
    if (hits.length === 1) return pay(hits[0], 'reference');
    if (hits.length > 1) return { kind: 'none', reason: 'the references name several open invoices' };
  }
  // 2. Invoice numbers, as written or without blanks (a number split over two remittance lines).
  const compact = compactReference(all);
  const byNumber = open.filter((c) => c.number && (mentions(all, c.number) || mentions(compact, compactReference(c.number))));
  if (byNumber.length === 1) return pay(byNumber[0], 'number');
  if (byNumber.length > 1) return { kind: 'none', reason: 'the remittance names several open invoices' };
  // 3. Exact amount due from the party.
  const iban = entry.counterpartyIban ? normalizeIban(entry.counterpartyIban) : null;
  const name = entry.counterpartyName ? normalizeName(entry.counterpartyName) : null;
  const byAmount = open.filter(
    (c) =>
      dec(c.amountDue).eq(amount) &&
      ((iban && c.partyIbans.some((i) => normalizeIban(i) === iban)) || (name && c.partyNames.some((n) => normalizeName(n) === name))),
  );
  if (byAmount.length === 1) return pay(byAmount[0], 'amountAndPayer');
  if (byAmount.length > 1) return { kind: 'none', reason: 'several open invoices of this party have this amount due' };
  return { kind: 'none', reason: 'no open invoice is referenced, and none of the payer has this amount due' };
}

/**
 * A German account number with its bank code (MT940 :25: "BLZ/Konto") as an IBAN: DE, check
 * digits, 8-digit BLZ, 10-digit account (zero-padded). Null when the text is not that shape.
 */
export function germanIbanOf(bankCode: string, account: string): string | null {
  if (!/^\d{8}$/.test(bankCode) || !/^\d{1,10}$/.test(account)) return null;
  const bban = `${bankCode}${account.padStart(10, '0')}`;
  // DE = 13 14; mod 97 of BBAN + "131400".
  let rest = 0;
  for (const ch of `${bban}131400`) rest = (rest * 10 + Number(ch)) % 97;
  return `DE${String(98 - rest).padStart(2, '0')}${bban}`;
}
