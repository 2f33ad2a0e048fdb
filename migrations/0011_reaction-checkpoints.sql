-- One row per reaction (process manager): the global position up to which its commands have
-- succeeded, and the highest position those commands appended (what a caller waits for to see the
-- consequences). A table of its own: rebuilding projections never touches it, so reactions never
-- fire again during a rebuild.
create table reaction_checkpoints (
  name            text primary key,
  position        bigint not null default 0,
  caused_position bigint not null default 0,
  updated_at      timestamptz not null default now()
);
