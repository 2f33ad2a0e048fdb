-- Read model of the users projection (projections/users.ts). Deleted users leave the read model;
-- their history stays in the event log.
create extension if not exists pg_trgm;

create table users (
  tenant_id             text not null,
  id                    uuid not null,
  email                 text not null,
  username              text,
  first_name            text,
  last_name             text,
  enabled               boolean not null,
  email_verified        boolean not null,
  phone_number          text,
  phone_number_verified boolean not null default false,
  totp_enabled          boolean not null default false,
  sms_enabled           boolean not null default false,
  webauthn_enabled      boolean not null default false,
  locked_until          timestamptz,
  created_at            timestamptz not null,
  updated_at            timestamptz not null,
  last_login_at         timestamptz,
  -- lower-cased email, username, first and last name: the full-text search target.
  search                text not null,
  primary key (tenant_id, id)
);
create index users_by_created on users (tenant_id, created_at desc, id desc);
create index users_by_email on users (tenant_id, lower(email));
create index users_search_trgm on users using gin (search gin_trgm_ops);

create table user_roles (
  tenant_id text not null,
  user_id   uuid not null,
  role_id   uuid not null,
  primary key (tenant_id, user_id, role_id)
);
create index user_roles_by_role on user_roles (tenant_id, role_id);
