/**
 * Bank statement files for tests, written as banks write them: camt.053 (ISO 20022
 * BankToCustomerStatement, versions 001.02/.04 and 001.08 differ in the party name and the entry
 * status) and MT940 with the German :86: subfields (DK "Datenformate").
 */
export interface TestEntry {
  ref?: string | null;
  amount: string;
  currency?: string;
  direction: 'credit' | 'debit';
  bookingDate: string;
  valueDate?: string;
  status?: 'BOOK' | 'PDNG' | 'INFO';
  name?: string;
  iban?: string;
  ustrd?: string[];
  creditorRef?: string;
  endToEnd?: string;
  reversal?: boolean;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function camt053(opts: { version: '02' | '04' | '08'; iban: string; currency?: string; statementId?: string; entries: TestEntry[] }): string {
  const v8 = opts.version === '08';
  const ccy = opts.currency ?? 'EUR';
  const party = (tag: string, name?: string) =>
    name ? (v8 ? `<${tag}><Pty><Nm>${esc(name)}</Nm></Pty></${tag}>` : `<${tag}><Nm>${esc(name)}</Nm></${tag}>`) : '';
  const entries = opts.entries
    .map((e) => {
      const credit = e.direction === 'credit';
      const status = e.status ?? 'BOOK';
      const [p, pa] = credit ? ['Dbtr', 'DbtrAcct'] : ['Cdtr', 'CdtrAcct'];
      const ustrd = (e.ustrd ?? []).map((u) => `<Ustrd>${esc(u)}</Ustrd>`).join('');
      const strd = e.creditorRef
        ? `<Strd><CdtrRefInf><Tp><CdOrPrtry><Cd>SCOR</Cd></CdOrPrtry><Issr>ISO</Issr></Tp><Ref>${esc(e.creditorRef)}</Ref></CdtrRefInf></Strd>`
        : '';
      return `
      <Ntry>
        ${e.ref ? `<NtryRef>${esc(e.ref)}</NtryRef>` : ''}
        <Amt Ccy="${e.currency ?? ccy}">${e.amount}</Amt>
        <CdtDbtInd>${credit ? 'CRDT' : 'DBIT'}</CdtDbtInd>
        ${e.reversal ? '<RvslInd>true</RvslInd>' : ''}
        ${v8 ? `<Sts><Cd>${status}</Cd></Sts>` : `<Sts>${status}</Sts>`}
        <BookgDt><Dt>${e.bookingDate}</Dt></BookgDt>
        <ValDt><Dt>${e.valueDate ?? e.bookingDate}</Dt></ValDt>
        ${e.ref ? `<AcctSvcrRef>${esc(e.ref)}</AcctSvcrRef>` : ''}
        <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>${credit ? 'RCDT' : 'ICDT'}</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd>
        <NtryDtls><TxDtls>
          <Refs>${e.ref ? `<AcctSvcrRef>${esc(e.ref)}</AcctSvcrRef>` : ''}<EndToEndId>${esc(e.endToEnd ?? 'NOTPROVIDED')}</EndToEndId></Refs>
          <AmtDtls><TxAmt><Amt Ccy="${e.currency ?? ccy}">${e.amount}</Amt></TxAmt></AmtDtls>
          <RltdPties>${party(p, e.name)}${e.iban ? `<${pa}><Id><IBAN>${e.iban}</IBAN></Id></${pa}>` : ''}</RltdPties>
          ${ustrd || strd ? `<RmtInf>${ustrd}${strd}</RmtInf>` : ''}
        </TxDtls></NtryDtls>
      </Ntry>`;
    })
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.${opts.version}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <BkToCstmrStmt>
    <GrpHdr><MsgId>MSG-${opts.statementId ?? 'STMT-1'}</MsgId><CreDtTm>2026-11-26T06:00:00+01:00</CreDtTm></GrpHdr>
    <Stmt>
      <Id>${opts.statementId ?? 'STMT-1'}</Id>
      <ElctrncSeqNb>1</ElctrncSeqNb>
      <CreDtTm>2026-11-26T06:00:00+01:00</CreDtTm>
      <Acct><Id><IBAN>${opts.iban}</IBAN></Id><Ccy>${ccy}</Ccy><Svcr><FinInstnId><BIC>BKAUATWW</BIC></FinInstnId></Svcr></Acct>
      <Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy="${ccy}">1000.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-11-01</Dt></Dt></Bal>
      ${entries}
    </Stmt>
  </BkToCstmrStmt>
</Document>
`;
}

/** An MT940 :61: + :86: pair per entry; :86: structured (GVC 166/177 with ?20… subfields) unless `free`. */
export function mt940(opts: { account: string; currency?: string; entries: (TestEntry & { free?: string; customerRef?: string })[] }): string {
  const ccy = opts.currency ?? 'EUR';
  const yymmdd = (d: string) => d.slice(2, 4) + d.slice(5, 7) + d.slice(8, 10);
  const lines = [':20:STARTUMSE', `:25:${opts.account}`, ':28C:00001/001', `:60F:C261101${ccy}1000,00`];
  for (const e of opts.entries) {
    const amount = e.amount.replace('.', ',');
    const mark = `${e.reversal ? 'R' : ''}${e.direction === 'credit' ? 'C' : 'D'}`;
    const vd = e.valueDate ?? e.bookingDate;
    lines.push(
      `:61:${yymmdd(vd)}${e.bookingDate.slice(5, 7)}${e.bookingDate.slice(8, 10)}${mark}${amount}NTRF${e.customerRef ?? 'NONREF'}${e.ref ? `//${e.ref}` : ''}`,
    );
    if (e.free !== undefined) {
      // Free text, wrapped at 65 characters as MT940 lines are.
      const chunks = e.free.match(/.{1,65}/g) ?? [''];
      lines.push(`:86:${chunks[0]}`, ...chunks.slice(1));
      continue;
    }
    const purpose = `${e.endToEnd ? `EREF+${e.endToEnd}` : ''}SVWZ+${(e.ustrd ?? []).join(' ')}`;
    const parts = [`?00${e.direction === 'credit' ? 'GUTSCHR. UEBERWEISUNG' : 'ONLINE-UEBERWEISUNG'}`, '?109310'];
    for (const [i, c] of (purpose.match(/.{1,27}/g) ?? []).slice(0, 10).entries()) parts.push(`?2${i}${c}`);
    parts.push('?30BYLADEMMXXX');
    if (e.iban) parts.push(`?31${e.iban}`);
    if (e.name) {
      parts.push(`?32${e.name.slice(0, 27)}`);
      if (e.name.length > 27) parts.push(`?33${e.name.slice(27, 54)}`);
    }
    parts.push('?34997');
    const field = `${e.direction === 'credit' ? '166' : '177'}${parts.join('')}`;
    const chunks = field.match(/.{1,65}/g)!;
    lines.push(`:86:${chunks[0]}`, ...chunks.slice(1));
  }
  lines.push(`:62F:C261130${ccy}1000,00`, '-');
  return `${lines.join('\r\n')}\r\n`;
}
