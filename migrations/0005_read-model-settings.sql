-- Read model of the settings projection (projections/settings.ts): tenants that changed their
-- security settings; absent tenants use the defaults.
create table realm_settings (
  tenant_id  text primary key,
  settings   jsonb not null,
  updated_at timestamptz not null
);
