/** The response body was longer than the caller's limit (declared or while reading). */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`response body larger than ${limit} bytes`);
  }
}

/**
 * A response body as text, read up to `limit` bytes: a misbehaving server could otherwise stream
 * without end into the process's memory. Throws BodyTooLargeError past the limit (the rest is
 * cancelled); a connection lost or timed out while reading throws the reader's error.
 */
export async function readBoundedText(res: Response, limit: number): Promise<string> {
  if (Number(res.headers.get('content-length') || 0) > limit) {
    await res.body?.cancel().catch(() => undefined);
    throw new BodyTooLargeError(limit);
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLargeError(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
