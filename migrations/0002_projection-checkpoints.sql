-- One row per projection: the global position its read model reflects. Written in the same
-- transaction as the read-model rows, so a crash never leaves them apart.
create table projection_checkpoints (
  name       text primary key,
  position   bigint not null default 0,
  updated_at timestamptz not null default now()
);
