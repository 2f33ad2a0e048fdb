-- Read model of the applications projection (projections/applications.ts): OAuth clients as the
-- admin API lists them. No secret hash here: client authentication reads the application's stream.
create table applications (
  tenant_id                 text not null,
  id                        uuid not null,
  client_id                 text not null,
  name                      text not null,
  type                      text not null,
  redirect_uris             text[] not null,
  post_logout_redirect_uris text[] not null,
  allowed_origins           text[] not null,
  grant_types               text[] not null,
  scopes                    text[] not null,
  created_at                timestamptz not null,
  updated_at                timestamptz not null,
  primary key (tenant_id, id)
);
create index applications_by_created on applications (tenant_id, created_at, id);
-- CORS preflight finds the tenant from the Origin (decisions.md, Points left open).
create index applications_by_origin on applications using gin (allowed_origins);
