-- Read models of the fga projection (projections/fga.ts): authorization models and relation tuples.
create table fga_models (
  tenant_id  text not null,
  id         uuid not null,
  name       text not null,
  version    integer not null,
  is_active  boolean not null,
  dsl        text not null,
  schema     jsonb not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (tenant_id, id)
);
create index fga_models_by_version on fga_models (tenant_id, version desc);
create unique index fga_models_one_active on fga_models (tenant_id) where is_active;

-- subject_relation is '' for a plain subject, so it can be part of the key. The key serves the
-- object -> subjects direction (check, expand, lists filtered by object); the second index the
-- subject -> objects direction (list-objects, lists filtered by subject).
create table fga_tuples (
  tenant_id        text not null,
  object_type      text not null,
  object_id        text not null,
  relation         text not null,
  subject_type     text not null,
  subject_id       text not null,
  subject_relation text not null,
  created_at       timestamptz not null,
  primary key (tenant_id, object_type, object_id, relation, subject_type, subject_id, subject_relation)
);
create index fga_tuples_by_subject on fga_tuples (tenant_id, subject_type, subject_id, subject_relation, object_type, relation, object_id);
