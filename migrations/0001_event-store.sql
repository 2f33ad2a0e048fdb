-- The event store. `position` orders the global log by (writing transaction id, ordinal inside
-- it): position = xid8 << 20 | ordinal. A global reader only reads positions whose transaction is
-- older than the oldest transaction still running (pg_snapshot_xmin), so every event it may see
-- later has a higher position than any it has seen: no event committed out of order is skipped.
create table events (
  position   bigint primary key,
  event_id   uuid not null unique,
  stream_id  text not null,
  revision   bigint not null,
  type       text not null,
  data       jsonb not null,
  metadata   jsonb not null,
  recorded_at timestamptz not null default now(),
  unique (stream_id, revision)
);

-- Positions below this bound are final: no running or future transaction can write below it.
create function events_visible_bound() returns bigint
language sql stable as $$
  select (pg_snapshot_xmin(pg_current_snapshot())::text::bigint) << 20
$$;
