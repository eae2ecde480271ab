import { describe, expect, it } from 'vitest';
import { ByteBoundedCache } from '../../api/byteBoundedCache';

describe('ByteBoundedCache', () => {
  it('forgets the least recently used entries beyond its limit', () => {
    let limit = 10;
    const cache = new ByteBoundedCache<string>(() => limit);
    cache.set('a', 'A', 4);
    cache.set('b', 'B', 4);
    expect(cache.get('a')).toBe('A'); // a is now the most recent
    cache.set('c', 'C', 4); // 12 > 10: b goes
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual(['A', undefined, 'C']);
    expect(cache.size).toEqual({ entries: 2, bytes: 8 });
    cache.set('a', 'A2', 2); // replacing counts the new size only
    expect(cache.size).toEqual({ entries: 2, bytes: 6 });
    cache.set('big', 'X', 11); // larger than the whole limit: not stored, nothing evicted
    expect(cache.size).toEqual({ entries: 2, bytes: 6 });
    limit = 0;
    cache.set('d', 'D', 1);
    expect(cache.get('d')).toBeUndefined();
    cache.delete('a');
    cache.clear();
    expect(cache.size).toEqual({ entries: 0, bytes: 0 });
  });
});
