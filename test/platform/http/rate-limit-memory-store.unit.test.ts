import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/platform/clock.ts';
import { MemoryRateLimitStore } from '../../../src/platform/http/rate-limit/memory-store.ts';
import { rateLimitStoreContract } from './rate-limit-store-contract.ts';

rateLimitStoreContract('in-memory', async (clock) => new MemoryRateLimitStore(clock));

describe('in-memory rate-limit store memory', () => {
  it('sweeps keys whose windows are over', async () => {
    const clock = new ManualClock();
    const store = new MemoryRateLimitStore(clock);
    await store.hit('short', 1_000);
    await store.hit('long', 60_000);
    clock.advance(2_000);
    store.sweep();
    expect(store.size).toBe(1);
    clock.advance(120_000);
    store.sweep();
    expect(store.size).toBe(0);
    await store.close();
  });

  it('keeps at most maxKeys, forgetting the least recently hit', async () => {
    const store = new MemoryRateLimitStore(new ManualClock(), { maxKeys: 3 });
    for (const key of ['a', 'b', 'c', 'a', 'd']) await store.hit(key, 60_000);
    expect(store.size).toBe(3);
    expect((await store.hit('a', 60_000)).counts.current).toBe(3); // kept: hit recently
    expect((await store.hit('b', 60_000)).counts.current).toBe(1); // forgotten: least recently hit
    await store.close();
  });
});
