/** The two modules of qrcode's core that qrMask.ts uses and its test compares with (qrcode's own types cover only its public API). */
declare module 'qrcode/lib/core/mask-pattern.js' {
  import type { BitMatrix } from 'qrcode';
  const MaskPattern: {
    applyMask(pattern: number, data: Pick<BitMatrix, 'size' | 'isReserved' | 'xor'>): void;
    getPenaltyN1(data: Pick<BitMatrix, 'size' | 'get'>): number;
    getPenaltyN2(data: Pick<BitMatrix, 'size' | 'get'>): number;
    getPenaltyN3(data: Pick<BitMatrix, 'size' | 'get'>): number;
    getPenaltyN4(data: Pick<BitMatrix, 'data'>): number;
  };
  export default MaskPattern;
}

declare module 'qrcode/lib/core/format-info.js' {
  import type { ErrorCorrectionLevel } from 'qrcode';
  const FormatInfo: {
    getEncodedBits(errorCorrectionLevel: ErrorCorrectionLevel, mask: number): number;
  };
  export default FormatInfo;
}
