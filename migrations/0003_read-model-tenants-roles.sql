-- Read models of the tenants and roles projections (projections/tenants.ts, projections/roles.ts).
-- Tenants are the platform's top level; every other read model leads with tenant_id (the name).
create table tenants (
  id           uuid primary key,
  name         text not null unique,
  display_name text not null,
  created_at   timestamptz not null,
  updated_at   timestamptz not null,
  deleted_at   timestamptz
);

create table roles (
  tenant_id   text not null,
  id          uuid not null,
  name        text not null,
  description text not null,
  color       text not null,
  permissions text[] not null,
  created_at  timestamptz not null,
  updated_at  timestamptz not null,
  primary key (tenant_id, id)
);
create index roles_by_name on roles (tenant_id, lower(name));
