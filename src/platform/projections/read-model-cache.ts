import type { RecordedEvent } from '../eventstore/port.ts';

export interface LoadingCacheOptions {
  /** Entries kept at most; the oldest loaded goes first (a flood of unknown keys cannot grow memory). */
  maxEntries: number;
  /** A lifetime after which an entry reloads even if nothing invalidated it (none: until invalidated). */
  ttlMs?: number;
  /** Milliseconds now (an injected clock); Date.now by default. */
  now?: () => number;
}

interface Entry<Value> {
  value: Promise<Value>;
  loadedAt: number;
  /** Set once the load succeeded: `current` answers it without a promise. */
  loaded?: { value: Value };
}

/**
 * Values loaded once per key and kept until something says they are stale. An entry holds the
 * load's promise, so concurrent misses share one load; an invalidation removes the entry, so a load
 * still running answers only the callers already waiting for it and is never kept. A failed load is
 * not remembered: the next caller tries again.
 */
export class LoadingCache<Value> {
  private readonly entries = new Map<string, Entry<Value>>();
  private readonly now: () => number;

  constructor(
    private readonly load: (key: string) => Promise<Value>,
    private readonly options: LoadingCacheOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  get(key: string): Promise<Value> {
    return this.entry(key).value;
  }

  /**
   * The value itself when it is loaded (no promise, no tick: every authenticated request looks its
   * tenant and roles up here), else the load's promise, as `get`.
   */
  current(key: string): Value | Promise<Value> {
    const entry = this.entry(key);
    return entry.loaded ? entry.loaded.value : entry.value;
  }

  private entry(key: string): Entry<Value> {
    const entry = this.entries.get(key);
    // Without a lifetime a kept entry needs no clock read (every authenticated request looks up two).
    if (entry && this.options.ttlMs === undefined) return entry;
    const now = this.now();
    if (entry && now - entry.loadedAt < this.options.ttlMs!) return entry;
    if (!entry && this.entries.size >= this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    const fresh: Entry<Value> = { value: this.load(key), loadedAt: now };
    this.entries.set(key, fresh);
    fresh.value.then(
      (value) => (fresh.loaded = { value }),
      () => this.entries.get(key) === fresh && this.entries.delete(key),
    );
    return fresh;
  }

  invalidate(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}

/** The keys an applied event makes stale, or 'all'. */
export type StaleKeys = (event: RecordedEvent) => readonly string[] | 'all';

/** Where a read model tells that it applied events: the projection runner, in every instance. */
export interface AppliedEventsSource {
  /**
   * Calls `listener` with each batch of events `projection` handles, once they are in its read
   * model (applied by this instance or another) and before anyone waiting for them is released.
   */
  onApplied(projection: string, listener: (events: RecordedEvent[]) => void): void;
}

/**
 * A per-instance cache of read-model answers kept current by the event log: each projection named
 * in `stale` drops the entries its applied events change. Every instance follows the whole log, so
 * a change made through any instance reaches every instance's cache within the projection lag; and
 * because entries are dropped before read-your-writes waiters are released, a request that waited
 * for its write reads the new value.
 */
export function readModelCache<Value>(
  source: AppliedEventsSource,
  options: LoadingCacheOptions & { load: (key: string) => Promise<Value>; stale: Record<string, StaleKeys> },
): LoadingCache<Value> {
  const cache = new LoadingCache(options.load, options);
  for (const [projection, staleKeys] of Object.entries(options.stale)) {
    source.onApplied(projection, (events) => {
      for (const event of events) {
        const keys = staleKeys(event);
        if (keys === 'all') return cache.clear();
        for (const key of keys) cache.invalidate(key);
      }
    });
  }
  return cache;
}
