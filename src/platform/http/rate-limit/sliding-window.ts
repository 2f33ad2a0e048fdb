/**
 * The sliding-window counter (as Cloudflare and Redis cells use it): each key keeps the hit count
 * of its current fixed window and of the one before; the requests "in the last window length" are
 * estimated as `previous * (share of the previous window still inside the sliding window) + current`.
 * Two integers per key instead of one timestamp per request (a sliding log), so memory and the
 * PostgreSQL row stay constant however hard a key is hit, at the price of assuming the previous
 * window's hits were spread evenly.
 */
export interface WindowCounts {
  /** Epoch milliseconds at which the current fixed window started (a multiple of the window). */
  windowStart: number;
  current: number;
  previous: number;
}

export interface RateLimitVerdict {
  allowed: boolean;
  limit: number;
  /** Requests still admitted now. */
  remaining: number;
  /** Epoch ms at which every hit counted so far has left the sliding window (the full limit is back). */
  resetAt: number;
  /** Milliseconds until the next request is admitted (0 while remaining > 0). */
  retryAfterMs: number;
}

export const windowStartOf = (now: number, windowMs: number): number => Math.floor(now / windowMs) * windowMs;

/**
 * The counts after one more hit at `now`. A window that moved on by one turns the current count
 * into the previous one; a longer silence forgets both. A stored window ahead of `now` (another
 * instance's clock runs slightly ahead) takes the hit rather than losing its counts.
 * The PostgreSQL store does the same in SQL.
 */
export function countHit(counts: WindowCounts | undefined, now: number, windowMs: number): WindowCounts {
  const windowStart = windowStartOf(now, windowMs);
  if (!counts) return { windowStart, current: 1, previous: 0 };
  if (counts.windowStart >= windowStart) return { ...counts, current: counts.current + 1 };
  const previous = counts.windowStart === windowStart - windowMs ? counts.current : 0;
  return { windowStart, current: 1, previous };
}

/** Epoch ms after which a key's counts no longer matter (both windows are over). */
export const expiresAt = (counts: WindowCounts, windowMs: number): number => counts.windowStart + 2 * windowMs;

/** Judges the hit just counted in `counts` against `limit` requests per `windowMs`. */
export function judge(counts: WindowCounts, now: number, limit: number, windowMs: number): RateLimitVerdict {
  const { windowStart, current, previous } = counts;
  const weight = (at: number) => Math.max(0, 1 - (at - windowStart) / windowMs);
  const estimate = previous * weight(now) + current;
  const remaining = Math.max(0, Math.floor(limit - estimate));
  return {
    allowed: estimate <= limit,
    limit,
    remaining,
    resetAt: expiresAt(counts, windowMs),
    retryAfterMs: remaining > 0 ? 0 : Math.max(0, nextAdmission(counts, limit, windowMs) - now),
  };
}

/** When the estimate, without further hits, falls to `limit - 1`, so that one more hit fits. */
function nextAdmission({ windowStart, current, previous }: WindowCounts, limit: number, windowMs: number): number {
  const target = limit - 1;
  // Still in this window: the previous window's share decays until the estimate reaches the target.
  if (current <= target) return windowStart + windowMs * (1 - (target - current) / previous);
  // Only in the next window, where this window's hits decay in turn.
  return windowStart + windowMs + windowMs * (1 - target / current);
}
