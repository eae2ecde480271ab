/**
 * Structured creditor reference (RF reference), ISO 11649: "RF", two check digits, then 1–21
 * letters and digits. The check digits are ISO 7064 MOD 97-10, as for the IBAN: letters count as
 * 10–35, the reference is read with "RF00" moved behind it, and the check is 98 − (that mod 97).
 * Used in the remittance of a transfer (EPC QR code, SEPA Strd/CdtrRefInf) and found there again
 * by the bank-statement matching (docs/bank-statements.md). Pure.
 */

const BODY = /^[A-Z0-9]{1,21}$/;

function mod97(s: string): number {
  let rest = 0;
  for (const ch of s) {
    const code = ch.charCodeAt(0);
    const digits = code >= 65 ? String(code - 55) : ch;
    for (const d of digits) rest = (rest * 10 + (d.charCodeAt(0) - 48)) % 97;
  }
  return rest;
}

/** Uppercase, without spaces (the paper form prints it in groups of four). */
export const compactReference = (value: string): string => value.replace(/\s+/g, '').toUpperCase();

/**
 * The RF reference of an invoice number: its letters and digits, uppercased (separators such as
 * '-' or '/' are not allowed in the reference and carry nothing), with check digits. Null when the
 * number has no letter or digit or more than 21 of them: such a number is sent as it is.
 */
export function creditorReferenceFor(invoiceNumber: string): string | null {
  const body = invoiceNumber.replace(/[^A-Za-z0-9]/g, '').toUpperCase();
  if (!BODY.test(body)) return null;
  const check = 98 - mod97(`${body}RF00`);
  return `RF${String(check).padStart(2, '0')}${body}`;
}

/** Whether a value (spaces allowed) is a well-formed RF reference with correct check digits. */
export function isCreditorReference(value: string): boolean {
  const v = compactReference(value);
  if (!/^RF\d{2}[A-Z0-9]{1,21}$/.test(v)) return false;
  return mod97(`${v.slice(4)}${v.slice(0, 4)}`) === 1;
}

/**
 * Every valid RF reference in a free text (remittance information), compacted, in order of
 * appearance. A reference may be printed in groups of four, so a match may run into the next word
 * ("RF18 5390 0754 7034 Rechnung"): it is cut back group by group to the longest valid reference.
 */
export function findCreditorReferences(text: string): string[] {
  const found: string[] = [];
  for (const m of text.toUpperCase().matchAll(/(?<![A-Z0-9])RF\d{2}(?: ?[A-Z0-9]+)+/g)) {
    const groups = m[0].split(' ');
    for (let n = groups.length; n > 0; n--) {
      const ref = groups.slice(0, n).join('');
      if (ref.length <= 25 && isCreditorReference(ref)) {
        if (!found.includes(ref)) found.push(ref);
        break;
      }
    }
  }
  return found;
}

/** "RF18 5390 0754 7034": the reference in groups of four, as printed for people. */
export const printReference = (ref: string): string => compactReference(ref).replace(/(.{4})(?=.)/g, '$1 ');
