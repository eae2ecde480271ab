import { kids, child, text, attr, parseInboundXml, refuse, type XNode, type ParsedXml } from '../inbound/xmlTree';
import { normalizeIban, isValidIban } from '../../domain/iban';
import type { ParsedStatement, StatementEntry } from '../../domain/bankStatements';

/**
 * camt.053 (ISO 20022 BankToCustomerStatement) reader, versions 001.02 to 001.13: the structure
 * this service reads is the same in all of them but for the party name (.02–.07 Dbtr/Nm, .08 on
 * Dbtr/Pty/Nm) and the entry status (.02 <Sts>BOOK</Sts>, .08 <Sts><Cd>BOOK</Cd></Sts>); both
 * spellings are read in every version. Parsed with the e-invoice reader's hardened XML setup
 * (shared/formats/inbound/xmlTree.ts: DOCTYPE/entities refused before parsing, no entity
 * expansion), with larger limits because a statement file can hold many thousands of entries.
 */
export const MAX_STATEMENT_BYTES = 20 * 1024 * 1024;
const LIMITS = { maxBytes: MAX_STATEMENT_BYTES, maxElements: 2_000_000 };

const NAMESPACE = /^urn:iso:std:iso:20022:tech:xsd:camt\.053\.001\.(\d{2})$/;
const AMOUNT = /^\d{1,15}(\.\d{1,5})?$/;

export function readCamt053(bytes: Buffer): ParsedStatement {
  const doc: ParsedXml = parseInboundXml(bytes, LIMITS);
  const version = NAMESPACE.exec(doc.namespace)?.[1];
  if (doc.root !== 'Document' || !version) {
    refuse(`not a camt.053 statement: root ${doc.root} in namespace ${JSON.stringify(doc.namespace.slice(0, 80))}`);
  }
  if (Number(version) < 2 || Number(version) > 13) refuse(`camt.053.001.${version} is not supported (001.02 to 001.13 are)`);
  const body = child(doc.node, 'BkToCstmrStmt') ?? refuse('camt.053 without BkToCstmrStmt');
  const stmts = kids(body, 'Stmt');
  if (stmts.length === 0) refuse('camt.053 without a statement (Stmt)');

  const warnings: string[] = [];
  const entries: StatementEntry[] = [];
  let accountIban: string | null = null;
  let account = '';
  let currency: string | null = null;
  let statementId: string | null = null;
  stmts.forEach((stmt, s) => {
    const iban = text(stmt, 'Acct', 'Id', 'IBAN');
    const other = text(stmt, 'Acct', 'Id', 'Othr', 'Id');
    const acct = iban ? normalizeIban(iban) : other;
    if (!acct) refuse(`statement ${s + 1}: the account (Acct/Id) is missing`);
    if (s === 0) {
      accountIban = iban ? normalizeIban(iban) : null;
      account = acct!;
      currency = text(stmt, 'Acct', 'Ccy');
      statementId = text(stmt, 'Id');
    } else if (acct !== account) {
      // One account per upload: dedup keys, the tenant check and the counts are per account.
      refuse(`the file holds statements of several accounts (${account}, ${acct}); upload one file per account`);
    }
    kids(stmt, 'Ntry').forEach((ntry, i) => {
      const where = `statement ${s + 1}, entry ${i + 1}`;
      const status = text(ntry, 'Sts', 'Cd') ?? text(ntry, 'Sts');
      if (status !== 'BOOK') {
        warnings.push(`${where}: status ${status ?? '(none)'}, not booked: left out`);
        return;
      }
      entries.push(readEntry(ntry, where, currency));
    });
  });
  if (accountIban && !isValidIban(accountIban)) warnings.push(`the account IBAN ${accountIban} fails its check digits`);
  return { format: `camt.053.001.${version}`, statementId, accountIban, account, currency, entries, warnings };
}

function readEntry(ntry: XNode, where: string, accountCurrency: string | null): StatementEntry {
  const amtNode = child(ntry, 'Amt');
  const amount = text(amtNode) ?? refuse(`${where}: Amt is missing`);
  if (!AMOUNT.test(amount)) refuse(`${where}: Amt is not a decimal amount: ${JSON.stringify(amount.slice(0, 40))}`);
  const [whole, frac = ''] = amount.split('.');
  if (frac.replace(/0+$/, '').length > 2) refuse(`${where}: Amt ${amount} has more than 2 decimals`);
  const currency = attr(amtNode, 'Ccy') ?? accountCurrency ?? refuse(`${where}: Amt has no currency (Ccy)`);
  const ind = text(ntry, 'CdtDbtInd');
  if (ind !== 'CRDT' && ind !== 'DBIT') refuse(`${where}: CdtDbtInd must be CRDT or DBIT, not ${JSON.stringify(ind)}`);
  const bookingDate =
    date(text(ntry, 'BookgDt', 'Dt') ?? text(ntry, 'BookgDt', 'DtTm'), `${where}: BookgDt`) ?? refuse(`${where}: the booking date (BookgDt) is missing`);
  const valueDate = date(text(ntry, 'ValDt', 'Dt') ?? text(ntry, 'ValDt', 'DtTm'), `${where}: ValDt`);

  // Details of the (first) transaction; a batch booking names its parties per transaction, and its
  // remittance lines are all kept.
  const txs = kids(child(ntry, 'NtryDtls'), 'TxDtls');
  const tx = txs[0];
  const credit = ind === 'CRDT';
  // The other party: the debtor of a credit, the creditor of a debit.
  const [party, partyAcct] = credit ? ['Dbtr', 'DbtrAcct'] : ['Cdtr', 'CdtrAcct'];
  const parties = child(tx, 'RltdPties');
  const name = text(parties, party, 'Nm') ?? text(parties, party, 'Pty', 'Nm') ?? text(parties, `Ultmt${party}`, 'Nm');
  const partyIban = text(parties, partyAcct, 'Id', 'IBAN');
  const ustrd: string[] = [];
  let creditorReference: string | null = null;
  for (const t of txs) {
    for (const u of kids(child(t, 'RmtInf'), 'Ustrd')) {
      const v = text(u);
      if (v) ustrd.push(v);
    }
    for (const strd of kids(child(t, 'RmtInf'), 'Strd')) {
      creditorReference ??= text(strd, 'CdtrRefInf', 'Ref');
      const addtl = kids(strd, 'AddtlRmtInf')
        .map((a) => text(a))
        .filter(Boolean);
      ustrd.push(...(addtl as string[]));
    }
  }
  const endToEnd = text(tx, 'Refs', 'EndToEndId');
  const bankText = text(ntry, 'AddtlNtryInf') ?? text(ntry, 'BkTxCd', 'Prtry', 'Cd');
  const reversal = text(ntry, 'RvslInd') === 'true';
  return {
    entryReference: text(ntry, 'AcctSvcrRef') ?? text(ntry, 'NtryRef'),
    bookingDate,
    valueDate,
    amount: `${BigInt(whole)}.${frac.padEnd(2, '0').slice(0, 2)}`,
    direction: credit ? 'credit' : 'debit',
    currency,
    reversal,
    counterpartyName: name?.slice(0, 140) ?? null,
    counterpartyIban: partyIban ? normalizeIban(partyIban) : null,
    remittance: ustrd.length ? ustrd.join(' ').slice(0, 2000) : null,
    creditorReference: creditorReference?.slice(0, 35) ?? null,
    endToEndId: endToEnd && endToEnd !== 'NOTPROVIDED' ? endToEnd.slice(0, 35) : null,
    bankText: bankText?.slice(0, 500) ?? null,
  };
}

function date(value: string | null, what: string): string | null {
  if (value === null) return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(value);
  if (!m) return refuse(`${what} is not a date: ${JSON.stringify(value.slice(0, 40))}`);
  const iso = `${m[1]}-${m[2]}-${m[3]}`;
  const d = new Date(`${iso}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== iso) refuse(`${what} is not a calendar date: ${iso}`);
  return iso;
}
