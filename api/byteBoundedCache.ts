/**
 * A map that holds at most `limit()` bytes of values, as the caller sizes them, and forgets the
 * least recently used entries first. The limit is read on every store, so a reloaded config
 * applies at once; a limit of 0 holds nothing.
 */
export class ByteBoundedCache<V> {
  /** Insertion order is recency: get() moves a hit to the end, eviction takes from the front. */
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private held = 0;

  constructor(private readonly limit: () => number) {}

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value;
  }

  set(key: string, value: V, bytes: number): void {
    this.delete(key);
    const limit = this.limit();
    if (bytes > limit) return;
    this.entries.set(key, { value, bytes });
    this.held += bytes;
    for (const [k] of this.entries) {
      if (this.held <= limit) break;
      this.delete(k);
    }
  }

  delete(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.held -= e.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.held = 0;
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.held };
  }
}
