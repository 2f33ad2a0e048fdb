import { beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/platform/clock.ts';
import { judge } from '../../../src/platform/http/rate-limit/sliding-window.ts';
import type { RateLimitStore } from '../../../src/platform/http/rate-limit/store.ts';

const MINUTE = 60_000;

/** What every rate-limit store must do, on the injected clock (which starts on a minute boundary). */
export function rateLimitStoreContract(name: string, open: (clock: ManualClock) => Promise<RateLimitStore>): void {
  describe(`${name} rate-limit store`, () => {
    let clock: ManualClock;
    let store: RateLimitStore;
    let keyNumber = 0;
    let key: string;
    beforeEach(async () => {
      clock = new ManualClock();
      store = await open(clock);
      key = `contract:${++keyNumber}:${Date.now()}`;
      return () => store.close();
    });
    const hits = async (count: number, of = key) => {
      let last;
      for (let i = 0; i < count; i++) last = await store.hit(of, MINUTE);
      return last!;
    };

    it('counts the hits of a key in its window, each key apart', async () => {
      clock.advance(5_000);
      const { counts, now } = await hits(3);
      expect(counts).toEqual({ windowStart: now - 5_000, current: 3, previous: 0 });
      expect((await store.hit(`${key}:other`, MINUTE)).counts.current).toBe(1);
    });

    it('turns the current count into the previous one in the next window and forgets both after two', async () => {
      await hits(4);
      clock.advance(MINUTE);
      expect((await hits(1)).counts).toMatchObject({ current: 1, previous: 4 });
      clock.advance(2 * MINUTE);
      expect((await hits(1)).counts).toMatchObject({ current: 1, previous: 0 });
    });

    it('slides: a burst at the end of a window still weighs at the start of the next', async () => {
      clock.advance(59_000);
      const burst = await hits(5);
      expect(judge(burst.counts, burst.now, 4, MINUTE)).toMatchObject({ allowed: false, remaining: 0 });
      // A fixed window would admit again at 60 s; the sliding window still holds the 5 hits.
      clock.advance(1_000);
      const atBoundary = await hits(1);
      expect(judge(atBoundary.counts, atBoundary.now, 4, MINUTE).allowed).toBe(false);
      // The 5 decay through the next window: 5 * (1 - 50 s / 60 s) + 2 hits of this window = 2.8 of 4.
      clock.advance(50_000);
      const later = await hits(1);
      expect(judge(later.counts, later.now, 4, MINUTE)).toMatchObject({ allowed: true, remaining: 1 });
    });

    it('counts concurrent hits exactly', async () => {
      await Promise.all(Array.from({ length: 40 }, () => store.hit(key, MINUTE)));
      expect((await hits(1)).counts.current).toBe(41);
    });
  });
}
