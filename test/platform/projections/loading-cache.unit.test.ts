import { describe, expect, it } from 'vitest';
import { LoadingCache } from '../../../src/platform/projections/read-model-cache.ts';

/** A loader whose loads the test settles by hand. */
function manualLoads() {
  const loads: Array<{ key: string; resolve: (value: string) => void; reject: (error: Error) => void }> = [];
  const load = (key: string) => new Promise<string>((resolve, reject) => loads.push({ key, resolve, reject }));
  return { loads, cache: new LoadingCache(load, { maxEntries: 10 }) };
}

describe('LoadingCache.current', () => {
  it('answers the load while it runs, then the loaded value itself without a promise, until invalidated', async () => {
    const { loads, cache } = manualLoads();
    const loading = cache.current('a');
    expect(loading).toBeInstanceOf(Promise);
    expect(cache.current('a')).toBe(loading); // one load for concurrent misses
    loads[0]!.resolve('A');
    await expect(loading).resolves.toBe('A');
    expect(cache.current('a')).toBe('A');
    expect(loads).toHaveLength(1);
    cache.invalidate('a');
    const reloading = cache.current('a');
    expect(reloading).toBeInstanceOf(Promise);
    loads[1]!.resolve('A2');
    await reloading;
    expect(cache.current('a')).toBe('A2');
  });

  it('does not remember a failed load: the next caller loads again', async () => {
    const { loads, cache } = manualLoads();
    const failing = cache.current('a');
    loads[0]!.reject(new Error('down'));
    await expect(failing).rejects.toThrow('down');
    const retry = cache.current('a');
    expect(retry).toBeInstanceOf(Promise);
    expect(loads).toHaveLength(2);
    loads[1]!.resolve('A');
    await expect(retry).resolves.toBe('A');
  });

  it('keeps a load invalidated while it ran out of the cache', async () => {
    const { loads, cache } = manualLoads();
    const stale = cache.current('a');
    cache.invalidate('a');
    loads[0]!.resolve('old');
    await expect(stale).resolves.toBe('old');
    const fresh = cache.current('a');
    expect(fresh).toBeInstanceOf(Promise);
    loads[1]!.resolve('new');
    await expect(fresh).resolves.toBe('new');
    expect(cache.current('a')).toBe('new');
  });
});
