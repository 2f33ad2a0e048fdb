import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Queryable } from '../../db/pool.ts';
import { windowStartOf } from './sliding-window.ts';
import type { CountedHit, RateLimitStore } from './store.ts';

/**
 * One atomic upsert per hit, so concurrent hits on any instance are all counted: the same rules as
 * `countHit` (same window: +1; the next window: current becomes previous; later: start over; a row
 * ahead of this instance's clock takes the hit). SET expressions read the row as it was.
 */
const HIT = `
insert into rate_limits as r (key, window_start, current_count, previous_count, expires_at)
values ($1, $2::bigint, 1, 0, $2::bigint + 2 * $3::bigint)
on conflict (key) do update set
  previous_count = case
    when r.window_start >= excluded.window_start then r.previous_count
    when r.window_start = excluded.window_start - $3::bigint then r.current_count
    else 0 end,
  current_count = case when r.window_start >= excluded.window_start then r.current_count + 1 else 1 end,
  window_start = greatest(r.window_start, excluded.window_start),
  expires_at = greatest(r.window_start, excluded.window_start) + 2 * $3::bigint
returning window_start, current_count, previous_count`;

/** Counts in PostgreSQL (table rate_limits, migration 0009), shared by every service instance. */
export class PostgresRateLimitStore implements RateLimitStore {
  private readonly cleaner: NodeJS.Timeout;

  constructor(
    private readonly db: Queryable,
    private readonly clock: Clock,
    logger: Logger,
    cleanupIntervalMs = 60_000,
  ) {
    this.cleaner = setInterval(() => {
      this.cleanup().catch((error: unknown) => logger.warn({ err: error }, 'rate-limit cleanup failed; the next run retries'));
    }, cleanupIntervalMs).unref();
  }

  async hit(key: string, windowMs: number): Promise<CountedHit> {
    const now = this.clock.now().getTime();
    const { rows } = await this.db.query<{ window_start: string; current_count: number; previous_count: number }>(HIT, [
      key,
      windowStartOf(now, windowMs),
      windowMs,
    ]);
    const row = rows[0]!;
    return { counts: { windowStart: Number(row.window_start), current: row.current_count, previous: row.previous_count }, now };
  }

  /** Deletes the rows whose windows are over (any instance may run it; it is idempotent). */
  async cleanup(): Promise<number> {
    const { rowCount } = await this.db.query('delete from rate_limits where expires_at <= $1', [this.clock.now().getTime()]);
    return rowCount ?? 0;
  }

  async close(): Promise<void> {
    clearInterval(this.cleaner);
  }
}
