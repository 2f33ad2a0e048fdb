-- Read model of the fga-history projection (projections/fga-history.ts): every relation tuple's
-- lifetimes, for authorization as it stood at an instant (check and list-objects with asOf). A
-- row is one lifetime: from the write's occurredAt until the deletion's (null while it stands).
-- A tuple stands at T when written_at <= T and (deleted_at is null or deleted_at > T), which is the
-- log folded up to T inclusive. written_position tells two lifetimes of one tuple apart.
create table fga_tuple_history (
  tenant_id        text not null,
  object_type      text not null,
  object_id        text not null,
  relation         text not null,
  subject_type     text not null,
  subject_id       text not null,
  subject_relation text not null,
  written_position bigint not null,
  written_at       timestamptz not null,
  deleted_at       timestamptz,
  primary key (tenant_id, written_position)
);
-- The engine's three lookups, tenant first, each with the lifetime to filter without the heap.
create index fga_tuple_history_by_object on fga_tuple_history
  (tenant_id, object_type, object_id, relation, subject_type, subject_relation, subject_id) include (written_at, deleted_at);
create index fga_tuple_history_by_subject on fga_tuple_history
  (tenant_id, subject_type, subject_id, subject_relation, object_type, relation, object_id) include (written_at, deleted_at);
