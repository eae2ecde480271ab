/**
 * The EPC QR code with the mask qrcode itself would choose, chosen faster. ISO/IEC 18004 has the
 * encoder score all eight mask patterns by four penalty rules and take the lowest (qrcode: the
 * first on a tie). qrcode scores each by masking the matrix and unmasking it again module by
 * module and calling `get` per module for each rule: about 8 % of a PDF's render CPU for one
 * code. Here the matrix is encoded once with mask 0 (`QRCode.create`, no search), each candidate
 * is that matrix re-masked from tables of the eight patterns (per symbol size, kept for the
 * process) with its format bits, and the four rules are counted in one pass over rows and
 * columns with qrcode's weights. The result is qrcode's symbol, module for module
 * (test/formats/pdf/epcQr.test.ts compares both on random payloads of every EPC size).
 */
import QRCode, { type QRCodeSegment } from 'qrcode';
import FormatInfo from 'qrcode/lib/core/format-info.js';
import MaskPattern from 'qrcode/lib/core/mask-pattern.js';

/** A QR symbol's modules, row-major, 1 = dark. */
export interface QrModules {
  size: number;
  data: Uint8Array;
}

/** The eight patterns' bits on the modules masking applies to (0 on function patterns), by symbol size. */
const maskTables = new Map<number, Uint8Array[]>();

function masksFor(size: number, reserved: Uint8Array): Uint8Array[] {
  let tables = maskTables.get(size);
  if (!tables) {
    tables = [];
    for (let p = 0; p < 8; p++) {
      const data = new Uint8Array(size * size);
      // qrcode's own applyMask on an empty matrix: its pattern formulas, its reserved modules.
      MaskPattern.applyMask(p, {
        size,
        isReserved: (row, col) => reserved[row * size + col],
        xor: (row, col, value) => {
          data[row * size + col] ^= value;
        },
      });
      tables.push(data);
    }
    maskTables.set(size, tables);
  }
  return tables;
}

/** qrcode's setupFormatInfo: the 15 format bits of `mask` in both copies, and the dark module. */
function writeFormatInfo(data: Uint8Array, size: number, bits: number): void {
  const set = (row: number, col: number, v: number) => {
    data[row * size + col] = v;
  };
  for (let i = 0; i < 15; i++) {
    const v = (bits >> i) & 1;
    if (i < 6) set(i, 8, v);
    else if (i < 8) set(i + 1, 8, v);
    else set(size - 15 + i, 8, v);
    if (i < 8) set(8, size - i - 1, v);
    else if (i < 9) set(8, 15 - i - 1 + 1, v);
    else set(8, 15 - i - 1, v);
  }
  set(size - 8, 8, 1);
}

/**
 * qrcode's penalty (getPenaltyN1 + N2 + N3 + N4): runs of five or more equal modules in a row or
 * column (3 + length − 5 each), 2×2 blocks of one colour (3 each), 1:1:3:1:1 finder-like patterns
 * with four light modules on one side in an 11-module window (40 each), and the dark share's
 * distance from 50 % in 5 % steps (10 each).
 */
export function penalty(data: Uint8Array, size: number): number {
  let runs = 0;
  let blocks = 0;
  let finders = 0;
  let dark = 0;
  for (let r = 0; r < size; r++) {
    let lastH = -1;
    let runH = 0;
    let lastV = -1;
    let runV = 0;
    let winH = 0;
    let winV = 0;
    const row = r * size;
    for (let c = 0; c < size; c++) {
      const h = data[row + c];
      const v = data[c * size + r];
      dark += h;
      if (h === lastH) runH++;
      else {
        if (runH >= 5) runs += runH - 2;
        lastH = h;
        runH = 1;
      }
      if (v === lastV) runV++;
      else {
        if (runV >= 5) runs += runV - 2;
        lastV = v;
        runV = 1;
      }
      winH = ((winH << 1) & 0x7ff) | h;
      winV = ((winV << 1) & 0x7ff) | v;
      if (c >= 10) {
        if (winH === 0x5d0 || winH === 0x05d) finders++;
        if (winV === 0x5d0 || winV === 0x05d) finders++;
      }
      if (r < size - 1 && c < size - 1) {
        const sum = h + data[row + c + 1] + data[row + size + c] + data[row + size + c + 1];
        if (sum === 0 || sum === 4) blocks++;
      }
    }
    if (runH >= 5) runs += runH - 2;
    if (runV >= 5) runs += runV - 2;
  }
  const k = Math.abs(Math.ceil((dark * 100) / (size * size) / 5) - 10);
  return runs + blocks * 3 + finders * 40 + k * 10;
}

/** `QRCode.create(segments, { errorCorrectionLevel })` with the mask search done here; the modules only. */
export function qrModules(segments: QRCodeSegment[], errorCorrectionLevel: 'L' | 'M' | 'Q' | 'H'): QrModules {
  const base = QRCode.create(segments, { errorCorrectionLevel, maskPattern: 0 });
  const { size, data, reservedBit } = base.modules;
  const masks = masksFor(size, reservedBit);
  const candidate = new Uint8Array(size * size);
  let best: Uint8Array | null = null;
  let lowest = Infinity;
  for (let p = 0; p < 8; p++) {
    const m0 = masks[0];
    const mp = masks[p];
    for (let i = 0; i < candidate.length; i++) candidate[i] = data[i] ^ m0[i] ^ mp[i];
    writeFormatInfo(candidate, size, FormatInfo.getEncodedBits(base.errorCorrectionLevel, p));
    const score = penalty(candidate, size);
    if (score < lowest) {
      lowest = score;
      best = candidate.slice();
    }
  }
  return { size, data: best as Uint8Array };
}
