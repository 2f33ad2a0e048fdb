-- Sliding-window rate-limit counters shared by every service instance
-- (src/platform/http/rate-limit/postgres-store.ts). One row per key: the hit counts of its current
-- fixed window and of the one before. Unlogged: counters are worth no WAL, and losing them in a
-- crash only forgives a minute of requests. Times are epoch milliseconds of the services' clocks.
create unlogged table rate_limits (
  key            text primary key,
  window_start   bigint not null,
  current_count  integer not null,
  previous_count integer not null,
  -- when both windows are over: the periodic cleanup deletes the row
  expires_at     bigint not null
);
create index rate_limits_by_expiry on rate_limits (expires_at);
