-- Read model of the sessions projection (projections/sessions.ts). Whether a session is expired
-- is computed at read time from expires_at and idle_expires_at, so reads never show an expired
-- session as active.
create table sessions (
  tenant_id       text not null,
  id              uuid not null,
  user_id         uuid not null,
  ip_address      text,
  user_agent      text,
  device          text not null,
  revoked         boolean not null default false,
  revoked_reason  text,
  created_at      timestamptz not null,
  updated_at      timestamptz not null,
  expires_at      timestamptz not null,
  idle_expires_at timestamptz not null,
  primary key (tenant_id, id)
);
create index sessions_by_activity on sessions (tenant_id, updated_at desc, id desc);
create index sessions_by_user on sessions (tenant_id, user_id, created_at);
