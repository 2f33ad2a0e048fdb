import type { Clock } from '../../clock.ts';
import { countHit, expiresAt, type WindowCounts } from './sliding-window.ts';
import type { CountedHit, RateLimitStore } from './store.ts';

interface Entry {
  counts: WindowCounts;
  windowMs: number;
}

export interface MemoryStoreOptions {
  /** Most keys kept; beyond it the least recently hit key is forgotten. */
  maxKeys?: number;
  sweepIntervalMs?: number;
}

/**
 * Counts in this process (one service instance). Memory is bounded: a periodic sweep drops keys
 * whose windows are over, and at `maxKeys` the least recently hit key goes (a Map iterates in
 * insertion order and every hit re-inserts its key), so a flood of distinct addresses cannot grow it.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly entries = new Map<string, Entry>();
  private readonly maxKeys: number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly clock: Clock,
    options: MemoryStoreOptions = {},
  ) {
    this.maxKeys = options.maxKeys ?? 100_000;
    this.sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 60_000).unref();
  }

  get size(): number {
    return this.entries.size;
  }

  async hit(key: string, windowMs: number): Promise<CountedHit> {
    const now = this.clock.now().getTime();
    const counts = countHit(this.entries.get(key)?.counts, now, windowMs);
    this.entries.delete(key);
    if (this.entries.size >= this.maxKeys) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { counts, windowMs });
    return { counts, now };
  }

  /** Drops every key whose counts no longer matter. */
  sweep(): void {
    const now = this.clock.now().getTime();
    for (const [key, entry] of this.entries) {
      if (expiresAt(entry.counts, entry.windowMs) <= now) this.entries.delete(key);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.entries.clear();
  }
}
