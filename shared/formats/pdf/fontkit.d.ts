/** fontkit ships no type declarations; only what fonts.ts uses (pdfkit takes the object as is). */
declare module 'fontkit' {
  export function create(buffer: Uint8Array, postscriptName?: string): unknown;
}
