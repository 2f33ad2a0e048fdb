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

-- Until now the users and sessions projections also applied consequences no event records
-- (sessions of a deleted user revoked, a deleted role's assignments dropped). Their rows are
-- rebuilt from the log by the handlers that only project; the reactions, starting at the
-- beginning of the log, then find those targets and record the consequences as events.
truncate users, user_roles, sessions;
update projection_checkpoints set position = 0 where name in ('users', 'sessions');
