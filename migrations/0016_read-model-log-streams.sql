-- Read model of the log-streams projection (projections/log-streams.ts). `config` is masked; the
-- whole configuration stays sealed by the master key and only the delivery engine opens it.
create table log_streams (
  tenant_id     text not null,
  id            uuid not null,
  name          text not null,
  type          text not null,
  status        text not null,
  config        jsonb not null,
  sealed_config text not null,
  -- Audit action names forwarded; null forwards every one.
  event_filters text[],
  created_at    timestamptz not null,
  updated_at    timestamptz not null,
  primary key (tenant_id, id)
);
create index log_streams_by_status on log_streams (tenant_id, status);
