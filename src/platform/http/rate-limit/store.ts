import type { WindowCounts } from './sliding-window.ts';

/** A hit as the store counted it, with the store's clock reading it was counted at. */
export interface CountedHit {
  counts: WindowCounts;
  now: number;
}

/** Where the sliding-window counts live: this process, or PostgreSQL shared by every instance. */
export interface RateLimitStore {
  /** Counts one hit of `key` in windows of `windowMs` and answers the key's counts after it. */
  hit(key: string, windowMs: number): Promise<CountedHit>;
  close(): Promise<void>;
}
