/** Attachments of a raw message as nodemailer writes it (multipart/mixed; base64 or quoted-printable parts). */
export function mailAttachments(raw: string): Array<{ filename: string; contentType: string; content: Buffer }> {
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(raw)?.[1];
  if (!boundary) return [];
  return raw
    .split(`--${boundary}`)
    .slice(1)
    .flatMap((part) => {
      const split = part.search(/\r?\n\r?\n/);
      const head = part.slice(0, split);
      if (!/Content-Disposition:\s*attachment/i.test(head)) return [];
      const body = part.slice(split).replace(/--\s*$/, '');
      const quotedPrintable = /Content-Transfer-Encoding:\s*quoted-printable/i.test(head);
      return [
        {
          filename: /filename="?([^";\r\n]+)"?/i.exec(head)![1],
          contentType: /Content-Type:\s*([^;\r\n]+)/i.exec(head)![1],
          content: quotedPrintable ? decodeQuotedPrintable(body.trim()) : Buffer.from(body, 'base64'),
        },
      ];
    });
}

function decodeQuotedPrintable(text: string): Buffer {
  const joined = text.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    if (joined[i] === '=' && /^[0-9A-F]{2}$/i.test(joined.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(joined.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(joined[i], 'utf8'));
    }
  }
  return Buffer.from(bytes);
}
