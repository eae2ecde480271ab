import iconv from 'iconv-lite';

/** A DATEV EXTF export (windows-1252) → its booking rows as fields, quotes removed; header and column line dropped. */
export function datevBookings(raw: Buffer): string[][] {
  const lines = iconv.decode(raw, 'windows-1252').trimEnd().split('\r\n');
  return lines.slice(2).map((l) => l.split(';').map((f) => f.replace(/^"|"$/g, '')));
}

/** The EXTF header line's fields, quotes removed. */
export const datevHeader = (raw: Buffer): string[] =>
  iconv
    .decode(raw, 'windows-1252')
    .split('\r\n')[0]
    .split(';')
    .map((f) => f.replace(/^"|"$/g, ''));
