-- Read model of the webhooks projection (projections/webhooks.ts). Secrets stay sealed by the
-- master key; the delivery engine opens them to sign.
create table webhooks (
  tenant_id                  text not null,
  id                         uuid not null,
  name                       text not null,
  url                        text not null,
  events                     text[] not null,
  is_active                  boolean not null,
  sealed_secret              text not null,
  secret_last_four           text not null,
  previous_sealed_secret     text,
  previous_secret_expires_at timestamptz,
  created_at                 timestamptz not null,
  updated_at                 timestamptz not null,
  primary key (tenant_id, id)
);
create index webhooks_by_created on webhooks (tenant_id, created_at, id);
