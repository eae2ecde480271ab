/**
 * The EPC QR code (GiroCode) read back the way a banking app reads it: the rendered page as an
 * image (pdftoppm), the code found and decoded by jsQR, each EPC069-12 line checked. docs/epc-qr.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { epcQrPayload } from '../../../shared/domain/epcQr';
import { asIssued, renderDocument } from '../../../shared/documents/renderDocument';
import QRCode from 'qrcode';
import MaskPattern from 'qrcode/lib/core/mask-pattern.js';
import { epcQrOf, moduleRectangles } from '../../../shared/formats/pdf/epcQrCode';
import { makeDocumentInput } from './fixtures';
import { penalty, qrModules } from '../../../shared/formats/pdf/qrMask';
import { pageTexts } from './pdfTools';

/** Every QR code payload found on the PDF's pages, page by page (150 dpi, as a phone camera sees paper). */
function decodeQrCodes(pdf: Buffer): string[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'epc-qr-'));
  try {
    writeFileSync(path.join(dir, 'doc.pdf'), pdf);
    execFileSync('pdftoppm', ['-r', '150', '-png', path.join(dir, 'doc.pdf'), path.join(dir, 'page')]);
    const found: string[] = [];
    for (const file of readdirSync(dir)
      .filter((f) => f.endsWith('.png'))
      .sort()) {
      const png = PNG.sync.read(readFileSync(path.join(dir, file)));
      const code = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
      // binaryData, not data: character set 1 is UTF-8, decoded here rather than by jsQR's guess.
      if (code) found.push(new TextDecoder('utf-8').decode(Uint8Array.from(code.binaryData)));
    }
    return found;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('EPC QR code on the invoice PDF', () => {
  it('decodes from the rendered page to the EPC069-12 payload of the amount due and the invoice number', async () => {
    const input = makeDocumentInput({ seller: { name: 'Müller & Söhne Software GmbH', iban: 'AT61 1904 3002 3457 3201', bic: 'BKAUATWW' } });
    const pdf = await renderDocument('pdf', input);
    const codes = decodeQrCodes(pdf);
    expect(codes).toHaveLength(1);
    const lines = codes[0].split('\n');
    expect(lines[0]).toBe('BCD');
    expect(lines[1]).toBe('002');
    expect(lines[2]).toBe('1');
    expect(lines[3]).toBe('SCT');
    expect(lines[4]).toBe('BKAUATWW');
    expect(lines[5]).toBe('Müller & Söhne Software GmbH');
    expect(lines[6]).toBe('AT611904300234573201');
    expect(lines[7]).toBe(`EUR${input.invoice.totalGross}`);
    expect(lines[8]).toBe('');
    expect(lines[9]).toBe('');
    expect(lines[10]).toBe('RE-2026-00042');
    expect(lines).toHaveLength(11);
    // The sentence asks for the same reference the code carries.
    expect(pageTexts(pdf).join('\n')).toMatch(/unter Angabe der\s+Rechnungsnummer RE-2026-00042/);
  });

  it('shows the amount as issued even when the invoice was paid in part since', async () => {
    const input = makeDocumentInput({ payments: [{ amount: '100.00', date: '2026-03-12', method: 'bank_transfer' }] });
    const [code] = decodeQrCodes(await renderDocument('pdf', input));
    expect(code.split('\n')[7]).toBe(`EUR${input.invoice.totalGross}`);
  });

  it('is in the ZUGFeRD PDF too, which stays PDF/A-3 with its factur-x.xml', async () => {
    const pdf = await renderDocument('zugferd', makeDocumentInput({ seller: { bic: null } }));
    const [code] = decodeQrCodes(pdf);
    expect(code.split('\n')[4]).toBe('');
    expect(pdf.toString('latin1')).toMatch(/pdfaid:part>3</);
    expect(pdf.toString('latin1')).toContain('factur-x.xml');
  });

  it('is absent for another currency, no IBAN, a quote, a credit note, a draft, a cancelled invoice and nothing due', async () => {
    const none = [
      makeDocumentInput({ invoice: { currency: 'USD', exchangeRate: { rate: '1.0800', date: '2026-03-09', source: 'ecb' } } }),
      makeDocumentInput({ seller: { iban: null, bic: null } }),
      makeDocumentInput({ invoice: { type: 'angebot', number: 'AN-2026-00001' } }),
      makeDocumentInput({ invoice: { type: 'gutschrift', number: 'GS-2026-00001', relatedInvoiceNumber: 'RE-2026-00041' } }),
      makeDocumentInput({ invoice: { status: 'entwurf', number: null } }),
      makeDocumentInput({ invoice: { status: 'storniert' } }),
      makeDocumentInput({ items: [{ description: 'Kulanz', quantity: '1', unitPrice: '0.00', taxRate: '20' }] }),
    ];
    for (const input of none) expect(epcQrOf(asIssued(input))).toBeNull();
    // Two of them through the whole rendering and the decoder as well.
    expect(decodeQrCodes(await renderDocument('pdf', none[0]))).toEqual([]);
    expect(decodeQrCodes(await renderDocument('pdf', none[3]))).toEqual([]);
  });
});

describe('moduleRectangles (how the code is drawn)', () => {
  it('covers exactly the dark modules, each once: real codes and random matrices', () => {
    const matrices: Array<{ size: number; dark: (r: number, c: number) => boolean }> = [];
    for (const payload of ['BCD\n002\n1\nSCT\n\nA\nAT611904300234573201\nEUR1.00\n\n\nRE-1', 'x'.repeat(300)]) {
      const qr = QRCode.create([{ data: new TextEncoder().encode(payload), mode: 'byte' }], { errorCorrectionLevel: 'M' });
      matrices.push({ size: qr.modules.size, dark: (r, c) => qr.modules.get(r, c) === 1 });
    }
    let seed = 3;
    for (let i = 0; i < 20; i++) {
      const size = 1 + (i % 9) * 3;
      const bits = Array.from({ length: size * size }, () => {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        return seed % 3 !== 0;
      });
      matrices.push({ size, dark: (r, c) => bits[r * size + c] });
    }
    for (const { size, dark } of matrices) {
      const covered = new Array(size * size).fill(0);
      for (const r of moduleRectangles(size, dark)) {
        for (let row = r.row; row < r.row + r.height; row++) for (let col = r.col; col < r.col + r.width; col++) covered[row * size + col]++;
      }
      for (let row = 0; row < size; row++) for (let col = 0; col < size; col++) expect(covered[row * size + col], `${row},${col}`).toBe(dark(row, col) ? 1 : 0);
    }
  });
});

describe('qrModules (the mask search done faster)', () => {
  let seed = 5;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };

  it("is qrcode's own symbol, module for module: random EPC payloads of every length up to 331 bytes", () => {
    const chars = 'abcdefghijklmnopqrstuvwxyzÄÖÜäöüß 0123456789.-&\n';
    const masks = new Set<number>();
    for (let i = 0; i < 300; i++) {
      let text = 'BCD\n002\n1\nSCT\n';
      for (let k = next(320); k > 0; k--) text += chars[next(chars.length)];
      const segments = [{ data: new TextEncoder().encode(text).slice(0, 331), mode: 'byte' as const }];
      const reference = QRCode.create(segments, { errorCorrectionLevel: 'M' });
      masks.add(reference.maskPattern as number);
      const ours = qrModules(segments, 'M');
      expect(ours.size).toBe(reference.modules.size);
      expect(Buffer.from(ours.data).equals(Buffer.from(reference.modules.data)), text).toBe(true);
    }
    expect(masks.size).toBeGreaterThan(3);
  });

  it("scores a matrix as qrcode's four penalty rules do", () => {
    for (let i = 0; i < 200; i++) {
      const size = 21 + 4 * next(10);
      const data = Uint8Array.from({ length: size * size }, () => (next(5) < 2 + (i % 3) ? 1 : 0));
      const matrix = { size, data, get: (r: number, c: number) => data[r * size + c] };
      const expected =
        MaskPattern.getPenaltyN1(matrix) + MaskPattern.getPenaltyN2(matrix) + MaskPattern.getPenaltyN3(matrix) + MaskPattern.getPenaltyN4(matrix);
      expect(penalty(data, size)).toBe(expected);
    }
  });
});

describe('epcQrPayload', () => {
  const base = { beneficiaryName: 'Beispiel GmbH', iban: 'DE89370400440532013000', amount: '12.30', remittance: 'RE-1' };

  it('writes the amount with two places and no grouping, the IBAN without spaces', () => {
    expect(epcQrPayload({ ...base, iban: 'de89 3704 0044 0532 0130 00', amount: '1234567.5' })).toBe(
      'BCD\n002\n1\nSCT\n\nBeispiel GmbH\nDE89370400440532013000\nEUR1234567.50\n\n\nRE-1',
    );
  });

  it('puts a multi-line name on one line and cuts it to 70 characters', () => {
    const lines = epcQrPayload({ ...base, beneficiaryName: `Erste Zeile\n${'x'.repeat(100)}` })?.split('\n') ?? [];
    expect(lines[5]).toHaveLength(70);
    expect(lines[5].startsWith('Erste Zeile x')).toBe(true);
  });

  it('refuses what no banking app could pay', () => {
    expect(epcQrPayload({ ...base, amount: '0.00' })).toBeNull();
    expect(epcQrPayload({ ...base, amount: '1000000000.00' })).toBeNull();
    expect(epcQrPayload({ ...base, iban: 'not an iban' })).toBeNull();
    expect(epcQrPayload({ ...base, remittance: ' ' })).toBeNull();
    expect(epcQrPayload({ ...base, remittance: 'ä'.repeat(140), beneficiaryName: 'ö'.repeat(70) })).toBeNull(); // > 331 bytes
  });
});
